package gatemath

import "math"

// AddLogs adds sign·log(v) of each run to sum.
func AddLogs(sum, runs []float64, sign float64) {
	for i, v := range runs {
		sum[i] += sign * math.Log(v)
	}
}

// Contrast is one row's contrast, run by run: sign·log(v) less the mean
// of the unit's other points (sum holds all k points' sign·log values,
// the row's included).
func Contrast(runs, sum []float64, k int, sign float64) []float64 {
	c := make([]float64, len(runs))
	for i, v := range runs {
		own := sign * math.Log(v)
		c[i] = own - (sum[i]-own)/float64(k-1)
	}
	return c
}

// MeanLog is the mean of the values' logs.
func MeanLog(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += math.Log(v)
	}
	return s / float64(len(vs))
}

// MinVariance keeps a row whose contrast never varies from taking all of
// its point's weight as 1/0.
const MinVariance = 1e-12

// AddScaled adds w·x to sum, element by element.
func AddScaled(sum, x []float64, w float64) {
	for i := range x {
		sum[i] += w * x[i]
	}
}

// PointWeights spreads a Bonferroni level over tests of noncentrality xi
// (the aimed change over its standard error): half of it evenly, half by
// the most-power weights of Rubin, Dudoit and van der Laan (2006) for
// one-sided z tests, level·w_j = Φ̄(ξ_j/2 + c/ξ_j) with c such that they
// sum to the level. The even half bounds what a test loses against plain
// Bonferroni (half its level); the other half goes to the tests a change
// of the aimed size would leave near the line, not to those it would pass
// by far or those it could never reach. The weights sum to 1.
func PointWeights(xi []float64, level float64) []float64 {
	m := float64(len(xi))
	w := make([]float64, len(xi))
	share := func(c float64) float64 {
		s := 0.0
		for j, x := range xi {
			w[j] = 0
			if x > 0 && !math.IsInf(x, 0) && !math.IsNaN(x) {
				w[j] = normalSF(x/2 + c/x)
			}
			s += w[j]
		}
		return s
	}
	lo, hi := -1e6, 1e6
	for range 200 {
		mid := (lo + hi) / 2
		if share(mid) > level {
			lo = mid
		} else {
			hi = mid
		}
	}
	s := share(hi)
	for j := range w {
		if s > 0 {
			w[j] = 0.5/m + 0.5*w[j]/s
		} else {
			w[j] = 1 / m
		}
	}
	return w
}

// normalSF is the standard normal's upper tail, Φ̄(z).
func normalSF(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }
