package perfgate

import (
	"bytes"
	"strings"
	"testing"

	vllmperf "github.com/vllmperf/vllmperf"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestPlanPriorSpread: a plan without an earlier run on its key prints
// the minimum detectable effect from the committed simulator baseline's
// spread, says so, and names a profile the baseline does not hold.
func TestPlanPriorSpread(t *testing.T) {
	cfg := quickConfig()
	cfg.Profiles = []string{"basic", "low-latency", "my-own"}
	p, err := NewPlan(cfg, Key{Runner: "r"}, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"plan: minimum detectable effect at count 10",
		"from the simulator baseline's spread (" + vllmperf.SimBaselineFile + ": sim:rtx4090-seed, quick size); no run on this key yet",
		"plan:   basic: ", ", " + units.TokPerSec + " ",
		"plan:   low-latency: ",
		"plan: no prior spread for my-own (not in " + vllmperf.SimBaselineFile + ")",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("plan output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "high-throughput:") {
		t.Errorf("plan shows a profile it does not run:\n%s", got)
	}
	for _, m := range p.MinimumEffects {
		if m.Profile == "basic" && m.Unit == units.TokPerSec && !(m.At(10) > 0 && m.At(10) < 0.5) {
			t.Errorf("basic tok/s prior effect at count 10 = %v, want a finite change under 50%%", m.At(10))
		}
	}
}
