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
