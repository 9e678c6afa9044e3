package startspread

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"golang.org/x/perf/benchproc"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// UnitSpread is the start spread of one judged metric (a headline metric
// or a tail, TailUnits): the tail tests use start_spread too, and a P99
// moves more between starts than a median.
type UnitSpread struct {
	Unit string
	// Cells are the points measured; Profiles the profiles they are in.
	Cells, Profiles int
	// Pooled and Spread are as SpreadEstimate's; Upper is the one-sided
	// 95% upper bound of the spread: the recordings' raw variance of a
	// cell's mean (the runs' part not taken off, so it errs on the large
	// side) over the χ² quantile of its degrees of freedom, DF: (files −
	// 1) per profile, a start being one effect on every point of a
	// profile.
	Pooled, Spread, Upper float64
	DF                    int
}

// spreadUpperLevel is the upper bounds' one-sided level.
const spreadUpperLevel = 0.95

// unitSpreads estimates every judged metric's start spread from the
// grouped recordings (at least two), in TailUnits' order after the
// headline ones.
func unitSpreads(sides []*input.Side) []UnitSpread {
	type acc struct {
		cells            int
		pooled, raw      float64
		profiles         map[string]bool
		order            int
		headline, isTail bool
	}
	byUnit := map[string]*acc{}
	var order []string
	for _, k := range sides[0].Order {
		first := sides[0].Benches[k]
		for _, u := range first.Units {
			if !units.Headline(u) && !units.IsTail(u) {
				continue
			}
			means, within, ok := cellMeans(sides, k, u)
			if !ok {
				continue
			}
			a := byUnit[u]
			if a == nil {
				a = &acc{profiles: map[string]bool{}}
				byUnit[u] = a
				order = append(order, u)
			}
			a.cells++
			between := stats.Variance(means)
			a.pooled += between - within
			a.raw += between
			a.profiles[first.Profile] = true
		}
	}
	out := make([]UnitSpread, 0, len(order))
	for _, u := range order {
		a := byUnit[u]
		us := UnitSpread{Unit: u, Cells: a.cells, Profiles: len(a.profiles), Pooled: a.pooled / float64(a.cells)}
		us.Spread = math.Sqrt(max(0, us.Pooled))
		us.DF = (len(sides) - 1) * us.Profiles
		us.Upper = math.Sqrt(a.raw / float64(a.cells) * float64(us.DF) / gatemath.ChiSquareQuantile(1-spreadUpperLevel, float64(us.DF)))
		out = append(out, us)
	}
	slices.SortStableFunc(out, func(a, b UnitSpread) int {
		if units.IsTail(a.Unit) != units.IsTail(b.Unit) {
			if units.IsTail(a.Unit) {
				return 1
			}
			return -1
		}
		return 0
	})
	return out
}

// cellMeans are one point's mean log value of unit in each recording and
// the mean over recordings of its runs' variance of that mean; ok false
// when a recording lacks it or has fewer than 2 positive runs.
func cellMeans(sides []*input.Side, k benchproc.Key, u string) (means []float64, within float64, ok bool) {
	for _, s := range sides {
		b, found := s.Benches[k]
		if !found || len(b.Values[u]) < 2 || !gatemath.AllPositive(b.Values[u]) {
			return nil, 0, false
		}
		logs := make([]float64, len(b.Values[u]))
		for i, v := range b.Values[u] {
			logs[i] = math.Log(v)
		}
		means = append(means, stats.Mean(logs))
		within += stats.Variance(logs) / float64(len(logs)) / float64(len(sides))
	}
	return means, within, true
}

// unitsWords says the per-metric estimates and the thresholds.yaml they
// recommend: start_spread at the headline metrics' largest upper bound,
// and an override for each tail whose upper bound is larger.
func (e *SpreadEstimate) unitsWords() string {
	if len(e.Units) == 0 {
		return ""
	}
	var b strings.Builder
	parts := make([]string, len(e.Units))
	headUpper := 0.0
	for i, u := range e.Units {
		est := "none detectable"
		if u.Pooled > 0 {
			est = fmt.Sprintf("%.2f%%", 100*u.Spread)
		}
		parts[i] = fmt.Sprintf("%s %s (≤ %.1f%%)", u.Unit, est, 100*u.Upper)
		if !units.IsTail(u.Unit) {
			headUpper = max(headUpper, u.Upper)
		}
	}
	fmt.Fprintf(&b, "  per metric (estimate, and its %.0f%% upper bound from %d degrees of freedom: %d recordings less one, per profile): %s\n",
		100*spreadUpperLevel, e.Units[0].DF, e.Files, strings.Join(parts, ", "))
	fmt.Fprintf(&b, "  recommended, at the upper bounds (an estimate from few recordings is read on the safe side):\n    gate: {start_spread: %.1f%%}   # the headline metrics' largest\n", 100*headUpper)
	var over []string
	for _, u := range e.Units {
		if units.IsTail(u.Unit) && u.Upper > headUpper {
			over = append(over, fmt.Sprintf("    - match: {metric: %s}\n      gate: {start_spread: %.1f%%}", u.Unit, 100*u.Upper))
		}
	}
	if len(over) > 0 {
		fmt.Fprintf(&b, "    overrides:   # the tails that move more between starts\n%s\n", strings.Join(over, "\n"))
	}
	return b.String()
}
