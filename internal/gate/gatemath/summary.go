package gatemath

import (
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

// Summarize computes one side's median and its confidence interval with
// benchmath.AssumeNothing, as benchstat does.
func Summarize(values []float64, confidence float64) (*Summary, *benchmath.Sample) {
	s := benchmath.NewSample(slices.Clone(values), &benchmath.DefaultThresholds) // sorts its copy
	sum := benchmath.AssumeNothing.Summary(s, confidence)
	return &Summary{N: len(values), Median: sum.Center, Lo: sum.Lo, Hi: sum.Hi, Values: s.Values}, s
}

// UTest is benchmath's comparison (Mann-Whitney U, exactly benchstat's p:
// benchmath.AssumeNothing.Compare's two-sided test, 1 where the test
// cannot be made) and the U statistic behind it, for the runs-needed
// estimate.
func UTest(base, next *benchmath.Sample) (p, theta float64) {
	p, u, err := MannWhitney(base.Values, next.Values, stats.LocationDiffers)
	if err != nil {
		return 1, 0.5
	}
	// U counts the pairs in which the baseline run is the larger (ties
	// half): θ estimates P(baseline > new).
	return p, u / float64(len(base.Values)*len(next.Values))
}

// UTestWorse is the one-sided Mann-Whitney U test (go-moremath's exact
// test) of NEW against the baseline for a change in the bad direction d:
// a rise of a lower-is-better metric, a fall of a higher-is-better one.
// Runs that cannot be told apart (every value equal) give 1.
func UTestWorse(d units.Direction, base, next *benchmath.Sample) float64 {
	alt := stats.LocationLess // baseline below new: a rise
	if d == units.Higher {
		alt = stats.LocationGreater
	}
	p, _, err := MannWhitney(base.Values, next.Values, alt)
	if err != nil {
		return 1
	}
	return p
}

// RelChange is new/base − 1, 0 when both are equal (0/0 included).
func RelChange(base, next float64) float64 {
	if base == next {
		return 0
	}
	return next/base - 1
}

// BadChange is the relative change in the metric's bad direction: a rise
// of a lower-is-better metric, a fall of a higher-is-better one.
func BadChange(d units.Direction, base, next float64) float64 {
	c := RelChange(base, next)
	if d == units.Higher {
		return -c
	}
	return c
}

// LogLimit is the minimum effect as a log ratio in the bad direction.
func LogLimit(d units.Direction, minEffect float64) float64 {
	if d == units.Higher {
		return -math.Log1p(-minEffect)
	}
	return math.Log1p(minEffect)
}

// FromLog turns a log ratio in the bad direction back into a signed
// relative change of the metric.
func FromLog(d units.Direction, w float64) float64 {
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

// WorstCase is the largest change in the bad direction the two medians'
// intervals allow, as a log ratio: the observed log ratio plus the two
// half-widths combined in quadrature (independent samples). +Inf when an
// interval is unbounded or the ratio is undefined (a zero median).
func WorstCase(d units.Direction, b, n *Summary) float64 {
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

// FiniteCIRuns is the fewest runs for which benchmath's median interval
// at confidence is finite (6 at 95%), as benchmath computes it.
func FiniteCIRuns(confidence float64) int {
	for n := 2; n <= MaxRunsEstimate; n++ {
		ci := stats.QuantileCI(n, 0.5, confidence)
		if ci.LoOrder > 0 && ci.HiOrder <= n {
			return n
		}
	}
	return MaxRunsEstimate + 1
}

// MinUTestP is the smallest two-sided p the exact U test can give with n
// runs a side (complete separation): 2 / C(2n, n).
func MinUTestP(n int) float64 {
	a, _ := math.Lgamma(float64(2*n + 1))
	b, _ := math.Lgamma(float64(n + 1))
	return 2 * math.Exp(-(a - 2*b))
}

// RunsToDetect estimates the runs a side at which the U test reaches
// p < α/m (the Bonferroni bound, Holm's strictest step) with
// estimatePower, if the effect stays as observed. With n runs a side U is
// about normal with mean θn² and, under no change, sd n·√((2n+1)/12), so
// the expected z is |θ − ½|·n·√(12/(2n+1)); it must reach z(1−α/2m) +
// z(power), and the exact test must be able to go that low at all.
func RunsToDetect(theta, alpha float64, m, now int) int {
	eff := math.Abs(theta - 0.5)
	if eff == 0 {
		return -1
	}
	level := alpha / float64(max(m, 1))
	z := stats.StdNormal.InvCDF(1-level/2) + stats.StdNormal.InvCDF(estimatePower)
	for n := now + 1; n <= MaxRunsEstimate; n++ {
		if eff*float64(n)*math.Sqrt(12/float64(2*n+1)) >= z && MinUTestP(n) <= level {
			return n
		}
	}
	return -1
}

// RunsToBound estimates the runs a side at which the worst case drops
// under the minimum effect with estimatePower, if the observed change and
// spread stay. Each median's interval narrows as 1/√n, so with n runs a
// side the combined half-width is H(n) = √((hb²·nb + hn²·nn)/n); H is
// z(confidence) standard errors of the log ratio, and the bound must fit in
// the margin L between the observed change and the minimum effect with
// z(power) standard errors to spare: H(n)·(z(c) + z(power))/z(c) ≤ L — the
// usual sample size of an equivalence test.
func RunsToBound(d units.Direction, b, n *Summary, margin, confidence float64) int {
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

// Summary is one side of a row: its runs' values, their median and the
// median's confidence interval (benchmath.AssumeNothing, as benchstat).
// Values are in the unit's own scale (nanoseconds for -ns units).
type Summary struct {
	N int
	// Median is the center; Lo and Hi bound its confidence interval, ±Inf
	// when N is too small for a finite interval at the level asked.
	Median, Lo, Hi float64
	// Values are the runs' values, sorted.
	Values []float64
}

// HolmRuns is the fewest runs a side at which the exact U test's smallest
// p (complete separation) passes the first step of Holm's correction over
// m tests at alpha; MaxRunsEstimate+1 when none up to it does.
func HolmRuns(alpha float64, m int) int {
	for n := 2; n <= MaxRunsEstimate; n++ {
		if MinUTestP(n) < alpha/float64(max(m, 1)) {
			return n
		}
	}
	return MaxRunsEstimate + 1
}
