package llmd_test

import (
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/thirdparty/llmd"
)

// Family is the family under test.
var Family = llmd.Family

// TestFamily: llm-d-inference-sim's family is usable, names only canonical
// metrics as missing, reads vLLM's names, and its flags make a profile of
// its own that a vLLM flag does not fit.
func TestFamily(t *testing.T) {
	if err := Family.Check(); err != nil {
		t.Fatal(err)
	}
	if Family.ExposesAll() || !serverfamily.VLLM.ExposesAll() {
		t.Errorf("ExposesAll: llm-d lacks metrics, vLLM none")
	}
	for _, name := range Family.Metrics.Missing {
		if !scrape.Known(name) || scrape.Canonical(name) != name {
			t.Errorf("Missing %q is not a canonical metric name", name)
		}
	}
	if got := Family.Canonical("vllm:time_per_output_token_seconds"); got != scrape.InterTokenLatencySeconds {
		t.Errorf("Canonical(time_per_output_token_seconds) = %q", got)
	}
	if !Family.IsRemoved("max_num_generation_tokens") || serverfamily.VLLM.IsRemoved("max_num_generation_tokens") {
		t.Errorf("max_num_generation_tokens is llm-d's removed name only")
	}
	l, err := Family.Launch("")
	if err != nil || l.Entrypoint != nil || l.HostFlag != "" {
		t.Errorf("Launch = %+v, %v: want the image's ENTRYPOINT and no --host", l, err)
	}
	p, err := profile.ParseFor(Family, "llmd.yaml", []byte("name: llmd\nflags:\n  max-num-seqs: 8\n  time-to-first-token: 30ms\n  enable-prefix-caching: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(p.Args(), " "), "--max-num-seqs 8 --time-to-first-token 30ms --no-enable-prefix-caching"; got != want {
		t.Errorf("Args = %q, want %q", got, want)
	}
	if _, err := profile.ParseFor(Family, "x.yaml", []byte("name: x\nflags:\n  dtype: float16\n")); err == nil || !strings.Contains(err.Error(), "unknown llm-d-inference-sim flag --dtype") {
		t.Errorf("a vLLM-only flag: %v, want it refused by name", err)
	}
}
