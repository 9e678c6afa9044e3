package gate

import (
	"fmt"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
	"golang.org/x/perf/benchmath"
)

// MaxRunsEstimate caps the runs-a-side estimate of an inconclusive row:
// beyond it RunsNeeded is -1 ("more than 100").
const MaxRunsEstimate = 100

// estimatePower is the chance, at the observed effect, that the runs
// RunsNeeded asks for make the U test significant.
const estimatePower = 0.8

// summarize computes one side's median and its confidence interval with
// benchmath.AssumeNothing, as benchstat does.
func summarize(values []float64, confidence float64) (*Summary, *benchmath.Sample) {
	s := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds) // sorts its copy
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	return &Summary{N: len(values), Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Values: s.Values}, s
}

// uTest is benchmath's comparison (Mann-Whitney U, exactly benchstat's p:
// benchmath.AssumeNothing.Compare's two-sided test, 1 where the test
// cannot be made) and the U statistic behind it, for the runs-needed
// estimate.
func uTest(base, next *benchmath.Sample) (p, theta float64) {
	p, u, err := mannWhitney(base.Values, next.Values, stats.LocationDiffers)
	if err != nil {
		return 1, 0.5
	}
	// U counts the pairs in which the baseline run is the larger (ties
	// half): θ estimates P(baseline > new).
	return p, u / float64(len(base.Values)*len(next.Values))
}

// uTestWorse is the one-sided Mann-Whitney U test (go-moremath's exact
// test) of NEW against the baseline for a change in the bad direction d:
// a rise of a lower-is-better metric, a fall of a higher-is-better one.
// Runs that cannot be told apart (every value equal) give 1.
func uTestWorse(d units.Direction, base, next *benchmath.Sample) float64 {
	alt := stats.LocationLess // baseline below new: a rise
	if d == units.Higher {
		alt = stats.LocationGreater
	}
	p, _, err := mannWhitney(base.Values, next.Values, alt)
	if err != nil {
		return 1
	}
	return p
}

// holm returns Holm's step-down adjusted p-values (Holm 1979): in
// ascending order the i-th smallest p (from 0) is multiplied by m − i,
// the results made non-decreasing and capped at 1. A test is significant
// when its adjusted p is below α; with one α for all rows this is exactly
// Holm's procedure.
func holm(ps []float64) []float64 {
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	adj := make([]float64, len(ps))
	running := 0.0
	for rank, i := range order {
		running = max(running, min(1, float64(len(ps)-rank)*ps[i]))
		adj[i] = running
	}
	return adj
}

// relChange is new/base − 1, 0 when both are equal (0/0 included).
func relChange(base, next float64) float64 {
	if base == next {
		return 0
	}
	return next/base - 1
}

// badChange is the relative change in the metric's bad direction: a rise
// of a lower-is-better metric, a fall of a higher-is-better one.
func badChange(d units.Direction, base, next float64) float64 {
	c := relChange(base, next)
	if d == units.Higher {
		return -c
	}
	return c
}

// logLimit is the minimum effect as a log ratio in the bad direction.
func logLimit(d units.Direction, minEffect float64) float64 {
	if d == units.Higher {
		return -math.Log1p(-minEffect)
	}
	return math.Log1p(minEffect)
}

// fromLog turns a log ratio in the bad direction back into a signed
// relative change of the metric.
func fromLog(d units.Direction, w float64) float64 {
	if d == units.Higher {
		return math.Expm1(-w)
	}
	return math.Expm1(w)
}

// halfWidths are the two intervals' half-widths towards the bad
// direction, as log ratios: for a lower-is-better metric how far the new
// median's interval reaches up and the baseline's down.
func halfWidths(d units.Direction, b, n *Summary) (hb, hn float64) {
	if d == units.Higher {
		return math.Log(b.Hi / b.Median), math.Log(n.Median / n.Lo)
	}
	return math.Log(b.Median / b.Lo), math.Log(n.Hi / n.Median)
}

// worstCase is the largest change in the bad direction the two medians'
// intervals allow, as a log ratio: the observed log ratio plus the two
// half-widths combined in quadrature (independent samples). +Inf when an
// interval is unbounded or the ratio is undefined (a zero median).
func worstCase(d units.Direction, b, n *Summary) float64 {
	if constantAndEqual(b, n) {
		return 0
	}
	r := math.Log(n.Median / b.Median)
	if d == units.Higher {
		r = -r
	}
	hb, hn := halfWidths(d, b, n)
	w := r + math.Hypot(hb, hn)
	if math.IsNaN(w) {
		return math.Inf(1)
	}
	return w
}

// constantAndEqual: every run on both sides has the same value.
func constantAndEqual(b, n *Summary) bool {
	v := b.Values[0]
	return b.Values[len(b.Values)-1] == v && n.Values[0] == v && n.Values[len(n.Values)-1] == v
}

// finiteCIRuns is the fewest runs for which benchmath's median interval
// at confidence is finite (6 at 95%), as benchmath computes it.
func finiteCIRuns(confidence float64) int {
	for n := 2; n <= MaxRunsEstimate; n++ {
		ci := stats.QuantileCI(n, 0.5, confidence)
		if ci.LoOrder > 0 && ci.HiOrder <= n {
			return n
		}
	}
	return MaxRunsEstimate + 1
}

// minUTestP is the smallest two-sided p the exact U test can give with n
// runs a side (complete separation): 2 / C(2n, n).
func minUTestP(n int) float64 {
	a, _ := math.Lgamma(float64(2*n + 1))
	b, _ := math.Lgamma(float64(n + 1))
	return 2 * math.Exp(-(a - 2*b))
}

// runsToDetect estimates the runs a side at which the U test reaches
// p < α/m (the Bonferroni bound, Holm's strictest step) with
// estimatePower, if the effect stays as observed. With n runs a side U is
// about normal with mean θn² and, under no change, sd n·√((2n+1)/12), so
// the expected z is |θ − ½|·n·√(12/(2n+1)); it must reach z(1−α/2m) +
// z(power), and the exact test must be able to go that low at all.
func runsToDetect(theta, alpha float64, m, now int) int {
	eff := math.Abs(theta - 0.5)
	if eff == 0 {
		return -1
	}
	level := alpha / float64(max(m, 1))
	z := stats.StdNormal.InvCDF(1-level/2) + stats.StdNormal.InvCDF(estimatePower)
	for n := now + 1; n <= MaxRunsEstimate; n++ {
		if eff*float64(n)*math.Sqrt(12/float64(2*n+1)) >= z && minUTestP(n) <= level {
			return n
		}
	}
	return -1
}

// runsToBound estimates the runs a side at which the worst case drops
// under the minimum effect with estimatePower, if the observed change and
// spread stay. Each median's interval narrows as 1/√n, so with n runs a
// side the combined half-width is H(n) = √((hb²·nb + hn²·nn)/n); H is
// z(confidence) standard errors of the log ratio, and the bound must fit in
// the margin L between the observed change and the minimum effect with
// z(power) standard errors to spare: H(n)·(z(c) + z(power))/z(c) ≤ L — the
// usual sample size of an equivalence test.
func runsToBound(d units.Direction, b, n *Summary, margin, confidence float64) int {
	hb, hn := halfWidths(d, b, n)
	if margin <= 0 || math.IsNaN(hb+hn) || math.IsInf(hb+hn, 0) {
		return -1
	}
	zc := stats.StdNormal.InvCDF(1 - (1-confidence)/2)
	inflate := (zc + stats.StdNormal.InvCDF(estimatePower)) / zc
	need := (hb*hb*float64(b.N) + hn*hn*float64(n.N)) * inflate * inflate / (margin * margin)
	if need > MaxRunsEstimate {
		return -1
	}
	return int(math.Ceil(need))
}

// decide sets the verdict, reason and runs needed of a tested row: both
// sides have at least min_samples runs, and P and PHolm are set. A row
// that is neither significant nor bounded is NO REGRESSION, or
// INCONCLUSIVE where the settings require equivalence. m is the number of
// tests of the row's profile, theta the U test's effect estimate, and
// absolute whether an absolute limit (slo: or max_error_rate) judges the
// unit on the new results.
func decide(row *Row, m int, theta float64, absolute bool) {
	g, d, b, n := row.Settings, row.Direction, row.Baseline, row.New
	bad := badChange(d, b.Median, n.Median)
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

	limit, worst := logLimit(d, g.MinEffect), worstCase(d, b, n)
	if worst < limit {
		row.Verdict = NoChange
		row.Reason = fmt.Sprintf("%s; at worst %s within the %g%% intervals, under the %s minimum effect",
			FormatDelta(row.DeltaPct), FormatDelta(100*fromLog(d, worst)), 100*g.Confidence, effect)
		if sig {
			row.Reason += " (a significant change, smaller than the minimum effect)"
		}
		return
	}

	row.Verdict = Inconclusive
	now := min(b.N, n.N)
	floor := max(now+1, g.MinSamples, finiteCIRuns(g.Confidence))
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
		row.RunsNeeded = atLeast(runsToDetect(theta, g.Alpha, m, now), floor)
		row.Reason = fmt.Sprintf("%s: worse by at least the %s minimum effect, but not significant (%s ≥ α %g)", FormatDelta(row.DeltaPct), effect, test, g.Alpha)
	} else {
		r := math.Log(n.Median / b.Median)
		if d == units.Higher {
			r = -r
		}
		row.RunsNeeded = atLeast(runsToBound(d, b, n, limit-r, g.Confidence), floor)
		row.Reason = fmt.Sprintf("%s, but the intervals allow %s: not under the %s minimum effect",
			FormatDelta(row.DeltaPct), FormatDelta(100*fromLog(d, worst)), effect)
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
	if n < 0 || n > MaxRunsEstimate {
		return -1
	}
	return max(n, floor)
}

func runsAdvice(n int) string {
	if n < 0 {
		return fmt.Sprintf("more than %d runs a side would be needed: the change is about the size of the minimum effect or the noise is too high (see docs/gate.md)", MaxRunsEstimate)
	}
	return fmt.Sprintf("about %d runs a side would decide (-count %d)", n, n)
}

// fmtRange writes a median with its interval: "0 (0 – 1.562%)".
func fmtRange(unit string, s *Summary) string {
	return fmt.Sprintf("%s (%s – %s)", FormatValue(unit, s.Median), FormatValue(unit, s.Lo), FormatValue(unit, s.Hi))
}
