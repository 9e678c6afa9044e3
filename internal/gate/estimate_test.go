package gate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// judgeOne decides one lower-is-better row alone (Holm over one test).
func judgeOne(base, next []float64, g thresholds.Gate) Row {
	row := Row{Unit: "ttft-p50-ns", Direction: units.Lower, Settings: g}
	b, bsam := gatemath.Summarize(base, g.Confidence)
	n, nsam := gatemath.Summarize(next, g.Confidence)
	row.Baseline, row.New = b, n
	row.DeltaPct = 100 * gatemath.RelChange(b.Median, n.Median)
	var theta float64
	row.P, theta = gatemath.UTest(bsam, nsam)
	row.PHolm = gatemath.Holm([]float64{row.P})[0]
	decide(&row, 1, theta, false)
	return row
}

func lognormal(rng *rand.Rand, n int, median, cv float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = median * math.Exp(cv*rng.NormFloat64())
	}
	return out
}

// TestRunsNeededEstimate checks the runs-needed estimate against what
// happens: rows that are INCONCLUSIVE at 10 runs a side (lognormal noise,
// the default settings) are measured again at the count their estimate
// asked for. The estimate aims at an 80% chance to decide; at least 75% of
// the re-runs must decide, and (almost) never wrongly.
func TestRunsNeededEstimate(t *testing.T) {
	t.Parallel()
	// The estimate matters where a row can stay undecided: where the
	// settings require equivalence (otherwise such a row passes as NO
	// REGRESSION).
	g := thresholds.DefaultGate
	g.RequireNoChange = true
	table := "\n| true change, run-to-run noise | INCONCLUSIVE at 10 runs | re-measured at the estimate | decided rightly there | median estimate |\n| --- | --- | --- | --- | --- |\n"
	for _, tc := range []struct {
		name   string
		label  string  // the row of docs/gate.md's table
		shift  float64 // true relative change
		cv     float64
		decide Verdict // the verdict a decision should reach
	}{
		{"real 8% regression, 6% noise", "+8% (a regression), 6%", 0.08, 0.06, Regression},
		{"no change, 3% noise", "none, 3%", 0, 0.03, NoChange},
		{"no change, 5% noise", "none, 5%", 0, 0.05, NoChange},
	} {
		rng := rand.New(rand.NewPCG(42, 7))
		inconclusive, decided, right, total := 0, 0, 0, 0
		var needs []int
		for trial := 0; trial < 400; trial++ {
			row := judgeOne(lognormal(rng, 10, 100, tc.cv), lognormal(rng, 10, 100*(1+tc.shift), tc.cv), g)
			if row.Verdict != Inconclusive {
				continue
			}
			inconclusive++
			if row.RunsNeeded < 0 {
				continue
			}
			needs = append(needs, row.RunsNeeded)
			total++
			k := row.RunsNeeded
			again := judgeOne(lognormal(rng, k, 100, tc.cv), lognormal(rng, k, 100*(1+tc.shift), tc.cv), g)
			if again.Verdict != Inconclusive {
				decided++
			}
			if again.Verdict == tc.decide {
				right++
			}
		}
		slices.Sort(needs)
		table += fmt.Sprintf("| %s | %d of 400 | %d | %d (%.0f%%) | %d runs |\n", tc.label, inconclusive, total, right, 100*float64(right)/float64(max(total, 1)), needs[len(needs)/2])
		t.Logf("%s: %d of 400 inconclusive at 10 runs, %d with an estimate ≤ %d; at the estimated count %d decided, %d as %s; median estimate %d runs a side",
			tc.name, inconclusive, total, gatemath.MaxRunsEstimate, decided, right, tc.decide, needs[len(needs)/2])
		if total < 20 {
			t.Fatalf("%s: only %d estimates to check", tc.name, total)
		}
		if float64(right) < 0.75*float64(total) {
			t.Errorf("%s: %d of %d re-runs at the estimated count decided rightly, want ≥ 75%%", tc.name, right, total)
		}
		if wrong := decided - right; float64(wrong) > 0.05*float64(total) {
			t.Errorf("%s: %d of %d re-runs decided wrongly", tc.name, wrong, total)
		}
	}
	docfigures.Sync(t, "docs/gate.md", "runs-estimate", table)
}
