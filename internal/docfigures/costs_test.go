package docfigures

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// TestFiguresFittedCosts writes docs/simulator.md's sentence on the fitted
// costs from presets.FittedCosts (what make fit put there), so that the page
// cannot keep the figures of an earlier fit.
func TestFiguresFittedCosts(t *testing.T) {
	t.Parallel()
	Sync(t, "docs/simulator.md", "fitted-costs", fittedCostsSentence(presets.FittedCosts))
}

// fittedCostsSentence says every figure of c, as docs/simulator.md lists
// them.
func fittedCostsSentence(c presets.Costs) string {
	f := c.Frontend
	return fmt.Sprintf("prefill efficiency %s on Ada, %s on Ampere, %s on Hopper (exponent %s below hidden %d), decode efficiency %s,\n"+
		"step %v, per sequence %v; front end: latency %v, base %v, chat request %v more before vLLM 0.11 and %v from 0.11 on, %v per prompt token, %v per\n"+
		"streamed token, %d await slices, slow-detokenizer factor %s.",
		num(c.PrefillEfficiency), num(c.AmperePrefillEfficiency), num(c.HopperPrefillEfficiency), num(c.PrefillSmallModelExponent), presets.PrefillRefHidden, num(c.DecodeEfficiency),
		dur(c.StepOverhead), dur(c.SeqOverhead), dur(f.Latency), dur(f.Base), dur(f.ChatRequest), dur(f.ChatRequest011), dur(f.PerPromptToken),
		dur(f.PerOutputToken), max(1, f.InputAwaits), num(f.SlowDetokenizeFactor))
}

// num writes a fitted fraction or factor as loso.yaml rounds it.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// dur writes a fitted time with a space before its unit ("2.6 ms").
func dur(d time.Duration) string {
	s := d.String()
	for i, r := range s {
		if (r < '0' || r > '9') && r != '.' {
			return s[:i] + " " + s[i:]
		}
	}
	return s
}
