package gate

import (
	"fmt"
	"slices"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// checkLimits tests thresholds.yaml's absolute limits on the new results,
// every benchmark of them (those without a baseline too):
//
//   - slo: limits on the median of the new runs. The median is the
//     typical run; one slow run is noise the regression test already
//     weighs, and a limit on a tail metric (ttft-p99-ns) is already a
//     limit on the tail of each run.
//   - max_error_rate on the highest err-% of any new run: failed requests
//     are never averaged away.
//
// A limit on a unit that a benchmark lacks while its baseline has it is
// MISSING; a limit on a unit no new benchmark reports is UNCHECKED.
func checkLimits(base, next *input.Side, set *thresholds.Set) []Check {
	var checks []Check
	applies := map[string]string{} // SLO unit → its limit, where some scope sets one
	reported := map[string]bool{}
	for _, k := range next.Order {
		nb := next.Benches[k]
		bb := base.Benches[k] // nil for a benchmark without baseline
		for _, u := range nb.Units {
			reported[u] = true
		}
		scope := set.Scope(nb.Profile, nb.Scenario)
		for _, unit := range sortedKeys(scope.SLO) {
			lim := scope.SLO[unit]
			if _, ok := applies[unit]; !ok {
				applies[unit] = lim.String(unit)
			}
			c := Check{Kind: SLOCheck, Name: nb.Name, Unit: unit, Limit: lim.String(unit), Value: nan()}
			values, ok := nb.Values[unit]
			switch {
			case ok:
				s, _ := gatemath.Summarize(values, thresholds.DefaultGate.Confidence)
				c.Value = s.Median
				if why := lim.Check(unit, s.Median); why != "" {
					c.Status, c.Reason = CheckFail, fmt.Sprintf("median of %d runs: %s", s.N, why)
				} else {
					c.Status = CheckPass
				}
			case bb != nil && bb.Values[unit] != nil:
				c.Status = CheckMissing
				c.Reason = fmt.Sprintf("the baseline reports %s here, the new results do not: the limit %s cannot be checked", unit, c.Limit)
			default:
				continue // the unit does not belong to this benchmark (knee, startup, ...)
			}
			checks = append(checks, c)
		}
		if values, ok := nb.Values[units.ErrPct]; ok {
			checks = append(checks, errorRateCheck(nb.Name, values, scope.MaxErrorRate))
		}
	}
	for _, unit := range sortedKeys(applies) {
		if !reported[unit] {
			checks = append(checks, Check{
				Kind: SLOCheck, Unit: unit, Limit: applies[unit], Value: nan(), Status: CheckUnchecked,
				Reason: fmt.Sprintf("thresholds.yaml limits %s (%s) but no benchmark of the new results reports it: check the unit's spelling (docs/bench-format.md), or scope the limit with an override", unit, applies[unit]),
			})
		}
	}
	return checks
}

// errorRateCheck tests the highest err-% of the runs against maxRate (a
// fraction, as thresholds holds it).
func errorRateCheck(name string, values []float64, maxRate float64) Check {
	limit := 100 * maxRate
	worst, over := values[0], 0
	for _, v := range values {
		worst = max(worst, v)
		if v > limit {
			over++
		}
	}
	c := Check{Kind: ErrorRateCheck, Name: name, Unit: units.ErrPct,
		Limit: "≤ " + units.FormatValue(units.ErrPct, limit), Value: worst, Status: CheckPass}
	if over > 0 {
		c.Status = CheckFail
		c.Reason = fmt.Sprintf("%d of %d runs failed more requests than max_error_rate allows (worst %s)",
			over, len(values), units.FormatValue(units.ErrPct, worst))
	}
	return c
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
