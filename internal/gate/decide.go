package gate

import (
	"fmt"
	"math"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// decide sets the verdict, reason and runs needed of a tested row: both
// sides have at least min_samples runs, and P and PHolm are set. A row
// that is neither significant nor bounded is NO REGRESSION, or
// INCONCLUSIVE where the settings require equivalence. m is the number of
// tests of the row's profile, theta the U test's effect estimate, and
// absolute whether an absolute limit (slo: or max_error_rate) judges the
// unit on the new results.
func decide(row *Row, m int, theta float64, absolute bool) {
	g, d, b, n := row.Settings, row.Direction, row.Baseline, row.New
	bad := gatemath.BadChange(d, b.Median, n.Median)
	sig := row.PHolm < g.Alpha
	test := fmt.Sprintf("p=%.3f, %.3f after Holm's correction over its profile's combined test and %d tests", row.P, row.PHolm, m)
	effect := fmtPct(g.MinEffect * 100)
	switch {
	case sig && bad >= g.MinEffect:
		row.Verdict = Regression
		row.Reason = fmt.Sprintf("%s: worse by at least the %s minimum effect; %s < α %g", FormatDelta(row.DeltaPct), effect, test, g.Alpha)
		return
	case sig && bad <= -g.MinEffect:
		row.Verdict = Improvement
		row.Reason = fmt.Sprintf("%s: better by at least the %s minimum effect; %s < α %g", FormatDelta(row.DeltaPct), effect, test, g.Alpha)
		return
	}

	limit, worst := gatemath.LogLimit(d, g.MinEffect), gatemath.WorstCase(d, b, n)
	if worst < limit {
		row.Verdict = NoChange
		row.Reason = fmt.Sprintf("%s; at worst %s within the %g%% intervals, under the %s minimum effect",
			FormatDelta(row.DeltaPct), FormatDelta(100*gatemath.FromLog(d, worst)), 100*g.Confidence, effect)
		if sig {
			row.Reason += " (a significant change, smaller than the minimum effect)"
		}
		return
	}

	row.Verdict = Inconclusive
	now := min(b.N, n.N)
	floor := max(now+1, g.MinSamples, gatemath.FiniteCIRuns(g.Confidence))
	if math.IsInf(b.Lo, 0) || math.IsInf(b.Hi, 0) || math.IsInf(n.Lo, 0) || math.IsInf(n.Hi, 0) {
		row.RunsNeeded = floor
		row.Reason = fmt.Sprintf("%s; %d and %d runs give no finite %g%% interval for the median: at least %d runs a side are needed",
			FormatDelta(row.DeltaPct), b.N, n.N, 100*g.Confidence, floor)
		return
	}
	if math.IsInf(worst, 1) && absolute {
		row.Verdict, row.RunsNeeded = NotGated, 0
		row.Reason = fmt.Sprintf("%s; with a median or interval bound at 0 (baseline %s, new %s) a relative change has no bound: its absolute limit judges it (see the limits)",
			FormatDelta(row.DeltaPct), fmtRange(row.Unit, b), fmtRange(row.Unit, n))
		return
	}
	if math.IsInf(worst, 1) {
		row.RunsNeeded = -1
		row.Reason = fmt.Sprintf("%s; with a median or interval bound at 0 (baseline %s, new %s) a relative change has no bound, and more runs will not give one: give %s an absolute limit (slo:) in thresholds.yaml",
			FormatDelta(row.DeltaPct), fmtRange(row.Unit, b), fmtRange(row.Unit, n), row.Unit)
		return
	}
	if bad >= g.MinEffect {
		row.RunsNeeded = atLeast(gatemath.RunsToDetect(theta, g.Alpha, m, now), floor)
		row.Reason = fmt.Sprintf("%s: worse by at least the %s minimum effect, but not significant (%s ≥ α %g)", FormatDelta(row.DeltaPct), effect, test, g.Alpha)
	} else {
		r := math.Log(n.Median / b.Median)
		if d == units.Higher {
			r = -r
		}
		row.RunsNeeded = atLeast(gatemath.RunsToBound(d, b, n, limit-r, g.Confidence), floor)
		row.Reason = fmt.Sprintf("%s, but the intervals allow %s: not under the %s minimum effect",
			FormatDelta(row.DeltaPct), FormatDelta(100*gatemath.FromLog(d, worst)), effect)
	}
	if g.RequireNoChange {
		row.Reason += "; " + runsAdvice(row.RunsNeeded) + " (require_no_change)"
		return
	}
	row.Verdict, row.RunsNeeded = NoRegression, 0
	row.Reason += "; no regression found, and equivalence is not required (require_no_change: false): passes"
}

// atLeast applies the floor to an estimate (-1 stays -1).
func atLeast(n, floor int) int {
	if n < 0 || n > gatemath.MaxRunsEstimate {
		return -1
	}
	return max(n, floor)
}

func runsAdvice(n int) string {
	if n < 0 {
		return fmt.Sprintf("more than %d runs a side would be needed: the change is about the size of the minimum effect or the noise is too high (see docs/gate.md)", gatemath.MaxRunsEstimate)
	}
	return fmt.Sprintf("about %d runs a side would decide (-count %d)", n, n)
}

// fmtRange writes a median with its interval: "0 (0 – 1.562%)".
func fmtRange(unit string, s *gatemath.Summary) string {
	return fmt.Sprintf("%s (%s – %s)", FormatValue(unit, s.Median), FormatValue(unit, s.Lo), FormatValue(unit, s.Hi))
}
