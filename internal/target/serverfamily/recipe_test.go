package serverfamily_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// TestRecipeNewFamily holds CONTRIBUTING.md's recipe to its word: a family
// that is one Go file (tinyserve_test.go) plus profiles YAML is found by
// name, parses its own profiles, launches its own container command and
// maps its own /metrics onto the canonical names, through the stages'
// public API and with no edit to them.
func TestRecipeNewFamily(t *testing.T) {
	t.Parallel()
	fam, err := serverfamily.ByName("TinyServe")
	if err != nil || fam != TinyServe {
		t.Fatalf("ByName(TinyServe) = %v, %v: Register in its file did not register it", fam, err)
	}
	if err := fam.Check(); err != nil {
		t.Fatal(err)
	}

	// Its profiles, with its flags (and not vLLM's).
	set := profile.Dir(filepath.Join("testdata", "profiles", fam.Key)).For(fam)
	ps, err := set.All()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range ps {
		got[p.Name] = strings.Join(p.Args(), " ")
	}
	want := map[string]string{"basic": "--slots 8 --kv-mb 512 --no-warm", "wide": "--slots 64 --warm"}
	if len(got) != len(want) || got["basic"] != want["basic"] || got["wide"] != want["wide"] {
		t.Errorf("profiles' flags = %q, want %q", got, want)
	}
	if _, err := profile.ParseFor(fam, "x.yaml", []byte("name: x\nflags:\n  max-num-seqs: 8\n")); err == nil || !strings.Contains(err.Error(), "unknown TinyServe flag --max-num-seqs") {
		t.Errorf("a vLLM flag in a TinyServe profile: %v, want unknown TinyServe flag", err)
	}

	// Its container: its image, command layout, always-on flag and env.
	plan, err := server.PlanContainer(ps[0], server.WithFamily(fam))
	if err != nil {
		t.Fatal(err)
	}
	wantCmd := []string{"--ckpt", "org/tiny", "--bind-port", "8000", "--metrics", "--slots", "8", "--kv-mb", "512", "--no-warm"}
	if plan.Image != fam.Image || !slices.Equal(plan.Entrypoint, []string{"tiny-serve"}) || !slices.Equal(plan.Cmd, wantCmd) || !slices.Contains(plan.EnvNames, "TINY_TELEMETRY") {
		t.Errorf("plan = %+v, want image %s, tiny-serve %q and TINY_TELEMETRY", plan, fam.Image, wantCmd)
	}

	// Its /metrics: its names read as the canonical ones.
	f, err := os.Open(filepath.Join("testdata", "tinyserve.metrics"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	snap, err := scrape.ParseFor(fam, f, "tinyserve.metrics", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{scrape.NumRequestsRunning: 3, scrape.NumRequestsWaiting: 1} {
		if got, err := snap.Gauge(name); err != nil || got != v {
			t.Errorf("Gauge(%s) = %v, %v; want %v", name, got, err, v)
		}
	}
	for name, v := range map[string]float64{scrape.GenerationTokensTotal: 1200, scrape.PromptTokensTotal: 4800} {
		if got, err := snap.Counter(name); err != nil || got != v {
			t.Errorf("Counter(%s) = %v, %v; want %v", name, got, err, v)
		}
	}
	if d, ok := serverfamily.DetectText(mustRead(t, filepath.Join("testdata", "tinyserve.metrics"))); !ok || d != fam {
		t.Errorf("DetectText = %v, want TinyServe", d)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
