package perfgate

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestPlanMinimumEffects: the plan prints each judged metric's minimum
// detectable effect at its count from the history's spread, and names the
// metrics too noisy for their min_effect.
func TestPlanMinimumEffects(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	b.WriteString("backend: sim\ngpu: sim:x\nmodel: m\nimage: in-process\n")
	for range 10 {
		for _, pt := range []string{"prompt=short/conc=1", "prompt=medium/conc=1", "prompt=long/conc=1"} {
			fmt.Fprintf(&b, "BenchmarkPerf/profile=basic/scenario=ttft-tpot/%s-2 1 1e9 ns/op %g tok/s %g %s\n",
				pt, 100*math.Exp(0.02*rng.NormFloat64()), 80e6*math.Exp(0.5*rng.NormFloat64()), units.TTFTP99)
		}
	}
	history := filepath.Join(t.TempDir(), "last.txt")
	if err := os.WriteFile(history, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(quickConfig(), Key{Runner: "r"}, 10, history)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"plan: minimum detectable effect at count 10", "plan:   basic: tok/s ", units.TTFTP99 + " ", "too noisy to see the minimum effect at count 10: basic " + units.TTFTP99} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "basic tok/s (") {
		t.Errorf("tok/s at 2%% spread called too noisy for its runs:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "above the min_effect of basic tok/s 5%: more starts a side (VLLMPERF_STARTS) would see them") {
		t.Errorf("the start floor's line does not name tok/s, whose min_effect is under it:\n%s", out.String())
	}
}
