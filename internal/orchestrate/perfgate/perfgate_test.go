package perfgate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

func TestKeyFromEnv(t *testing.T) {
	for _, v := range []string{"VLLMPERF_BACKEND", "VLLMPERF_IMAGE", "VLLMPERF_MODEL", "VLLMPERF_SIZE", "VLLMPERF_PROFILES", "VLLMPERF_SCENARIOS", "VLLMPERF_GPU_NAME"} {
		t.Setenv(v, "")
	}
	t.Setenv(EnvRunner, "gpu-runner-1")
	t.Setenv("VLLMPERF_SIM_ARGS", "--sim-slowdown 1.3")
	base := KeyFromEnv(t.Context())
	if base.Runner != "gpu-runner-1" || base.Backend != "sim" || base.Image != "in-process" || base.Size != "full" || base.Profiles != "all" || base.GPU != "none" {
		t.Errorf("default key %+v", base)
	}
	t.Setenv("VLLMPERF_PROFILES", "basic")
	basic := KeyFromEnv(t.Context())
	t.Setenv("VLLMPERF_BACKEND", "container")
	t.Setenv("VLLMPERF_IMAGE", "sim")
	image := KeyFromEnv(t.Context())
	if image.Image != "sim" || image.GPU != "none" {
		t.Errorf("simulator image key %+v: want image sim and no GPU", image)
	}
	slugs := map[string]bool{base.Slug(): true, basic.Slug(): true, image.Slug(): true}
	if len(slugs) != 3 {
		t.Errorf("keys that differ share a folder: %v", slugs)
	}
	if again := KeyFromEnv(t.Context()); again.Slug() != image.Slug() {
		t.Errorf("the same environment gave %s then %s", image.Slug(), again.Slug())
	}
	if strings.ContainsAny(image.Slug(), "/ :\"") {
		t.Errorf("slug %q is not a safe folder name", image.Slug())
	}
}

func writeBench(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "bench.txt")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStoreRecordsOnceThenRefreshes(t *testing.T) {
	s := Store{Dir: t.TempDir()}
	k := Key{Runner: "r", Backend: "sim", Profiles: "basic"}
	if _, _, ok, err := s.Baseline(k); ok || err != nil {
		t.Fatalf("empty store: ok %v err %v", ok, err)
	}
	// Two runs finish at once with no baseline: exactly one is recorded.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		bench := writeBench(t, "run "+string(rune('A'+i))+"\n")
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Record(k, bench, Meta{Key: k, Provisional: true}, false)
		}()
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) || !(errors.Is(errs[0], ErrRecorded) || errors.Is(errs[1], ErrRecorded)) {
		t.Fatalf("two first records: %v, %v; want one recorded, one ErrRecorded", errs[0], errs[1])
	}
	path, m, ok, err := s.Baseline(k)
	if !ok || err != nil || !m.Provisional || m.Key != k {
		t.Fatalf("baseline %s: ok %v, meta %+v, err %v", path, ok, m, err)
	}
	first, _ := os.ReadFile(path)
	// A refresh replaces it.
	if err := s.Record(k, writeBench(t, "run C\n"), Meta{Key: k}, true); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	_, m, _, _ = s.Baseline(k)
	if string(got) != "run C\n" || string(got) == string(first) || m.Provisional {
		t.Errorf("after the refresh: %q (was %q), provisional %v", got, first, m.Provisional)
	}
}

func quickConfig() suite.Config {
	return suite.Config{Profiles: []string{"basic"}, Scenarios: []string{"ttft-tpot"}, Size: scenario.Quick, Thresholds: thresholds.Empty()}
}

func TestPlan(t *testing.T) {
	p, err := NewPlan(quickConfig(), Key{Runner: "r"}, 8, filepath.Join("testdata", "last-basic-ttft.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// One count: a start (median 300ms) and three points (1s, 1.5s, 2.3s).
	per := 300*time.Millisecond + 4800*time.Millisecond
	if p.Points != 3 || p.Starts != 8 || p.Runs != 24 || p.Unknown != 0 || p.Estimate != 8*per {
		t.Errorf("plan %+v: want 3 points, 8 starts, 24 runs, %v", p, 8*per)
	}
	if p.MinCount < 6 || p.MinCount > 10 {
		t.Errorf("MinCount %d: want min_samples (6) or what Holm's correction needs", p.MinCount)
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"8 server starts, 24 runs", "about 41s", "the gate needs count ≥"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan output lacks %q:\n%s", want, out.String())
		}
	}
	for _, tc := range []struct {
		budget time.Duration
		want   int
		note   string
	}{
		{budget: time.Minute, want: 11, note: "fits 11 runs"},
		{budget: 10 * time.Second, want: p.MinCount, note: "the gate needs"},
		{budget: 24 * time.Hour, want: MaxCount, note: "count 30"},
	} {
		p.ApplyBudget(tc.budget)
		if p.Count != tc.want || !strings.Contains(p.Note, tc.note) {
			t.Errorf("budget %v: count %d (%s), want %d with %q", tc.budget, p.Count, p.Note, tc.want, tc.note)
		}
	}
}

func TestPlanWithoutHistory(t *testing.T) {
	p, err := NewPlan(quickConfig(), Key{}, 8, "")
	if err != nil {
		t.Fatal(err)
	}
	p.ApplyBudget(time.Hour)
	var out bytes.Buffer
	_ = p.Write(&out)
	if p.Unknown != 4 || p.Count != 8 || !strings.Contains(out.String(), "unknown (no earlier run on this key, and no prediction)") || !strings.Contains(p.Note, "count 8 kept") {
		t.Errorf("plan without history: %+v\n%s", p, out.String())
	}
	// With a prediction the plan says the time once: the prediction's.
	p.Prediction = NewPrediction(quickConfig(), Key{GPU: "NVIDIA H100 80GB HBM3 x1"}, p.Count, "")
	out.Reset()
	if err := p.Write(&out); err != nil || p.Prediction.Err != nil {
		t.Fatal(err, p.Prediction.Err)
	}
	if s := out.String(); strings.Contains(s, "unknown") || !strings.Contains(s, "time predicted below (no earlier run on this key)") || !strings.Contains(s, "plan: predicted total") {
		t.Errorf("plan with a prediction says its time twice, or not once:\n%s", s)
	}
}

func TestTouched(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  int
	}{
		{files: []string{"README.md", "docs/gate.md", "internal/results/report/html.go"}, want: 0},
		{files: []string{"docs/gate.md", "scenarios/profiles/basic.yaml"}, want: 1},
		{files: []string{"thresholds.yaml", "internal/target/server/server.go"}, want: 2},
		{files: []string{"scenariosX/a.yaml", "thresholds.yaml.bak"}, want: 0},
	} {
		if got := Touched(tc.files); len(got) != tc.want {
			t.Errorf("Touched(%v) = %v, want %d files", tc.files, got, tc.want)
		}
	}
}

func TestSkip(t *testing.T) {
	if skip, why := (Change{}).Skip(t.Context(), "."); skip || why != "" {
		t.Errorf("not a pull request: skip %v (%s)", skip, why)
	}
	if skip, _ := (Change{Base: "HEAD", Labels: []string{ForceLabel}}).Skip(t.Context(), "."); skip {
		t.Error("the perf-gate label did not force the run")
	}
	skip, why := (Change{Base: "no-such-revision-xyz"}).Skip(t.Context(), ".")
	if skip || !strings.Contains(why, "could not list the files") {
		t.Errorf("an unreadable diff: skip %v (%s); want a measured run with a warning", skip, why)
	}
}

func TestWorst(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{{0, 0, 0}, {0, 3, 3}, {3, 2, 2}, {1, 2, 1}, {2, 1, 1}, {1, 0, 1}} {
		if got := worst(tc.a, tc.b); got != tc.want {
			t.Errorf("worst(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
