package gatemath

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/mathx"
	"github.com/aclements/go-moremath/stats"
)

// LogChoose is log C(n, k).
func LogChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// RunSpread is the standard deviation across runs of the runs' mean log
// value over the points whose run count is the most common one (and
// whose values are all positive); NaN with fewer than 3 runs.
func RunSpread(points [][]float64) (float64, int) {
	lens := make([]int, len(points))
	for i, p := range points {
		lens[i] = len(p)
	}
	n := ModeInt(lens)
	if n < 3 {
		return math.NaN(), 0
	}
	means := make([]float64, n)
	used := 0
	for _, p := range points {
		if len(p) != n || slices.ContainsFunc(p, func(v float64) bool { return !(v > 0) || math.IsInf(v, 0) }) {
			continue
		}
		used++
		for j, v := range p {
			means[j] += math.Log(v)
		}
	}
	if used == 0 {
		return math.NaN(), 0
	}
	for j := range means {
		means[j] /= float64(used)
	}
	return stats.StdDev(means), used
}

// PointSpread is the median, over the points with at least 3 runs (all
// positive), of the standard deviation of a point's log values: the
// run-to-run CV of one row, which the headline test's rows each see
// (their Cauchy combination is about as strong as its typical row, not
// the average of the points); NaN when no point has 3 runs.
func PointSpread(points [][]float64) (float64, int) {
	var sds []float64
	for _, p := range points {
		if len(p) < 3 || slices.ContainsFunc(p, func(v float64) bool { return !(v > 0) || math.IsInf(v, 0) }) {
			continue
		}
		logs := make([]float64, len(p))
		for i, v := range p {
			logs[i] = math.Log(v)
		}
		sds = append(sds, stats.StdDev(logs))
	}
	return Median(sds), len(sds)
}

// ModeInt is the most common value (the larger on a tie); 0 for none.
func ModeInt(xs []int) int {
	count := map[int]int{}
	best := 0
	for _, x := range xs {
		count[x]++
		if count[x] > count[best] || (count[x] == count[best] && x > best) {
			best = x
		}
	}
	return best
}

// ChiSquareQuantile is the q-quantile of the χ² distribution with df
// degrees of freedom (its CDF is the regularized lower incomplete gamma
// function P(df/2, x/2)), by bisection.
func ChiSquareQuantile(q, df float64) float64 {
	lo, hi := 0.0, max(10*df, 100)
	for range 200 {
		mid := (lo + hi) / 2
		if mathx.GammaInc(df/2, mid/2) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// LogmedianSE is the median of the values' logs and its standard error
// from their median absolute deviation (1.4826·MAD estimates σ; the
// median's standard error is √(π/2)·σ/√n): robust to the few probes a
// burst of another process slowed.
func LogMedianSE(xs []float64) (med, se float64) {
	ls := make([]float64, len(xs))
	for i, x := range xs {
		ls[i] = math.Log(x)
	}
	med = medianOf(ls)
	dev := make([]float64, len(ls))
	for i, l := range ls {
		dev[i] = math.Abs(l - med)
	}
	sigma := 1.4826 * medianOf(dev)
	return med, math.Sqrt(math.Pi/2) * sigma / math.Sqrt(float64(len(xs)))
}

func medianOf(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
