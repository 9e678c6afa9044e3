package stats

import (
	"math"
	"slices"
	"time"
)

// DefaultPercentiles are the percentiles every Dist carries: those of
// vLLM's result JSON keys (p50, p90, p95, p99) and p99.9.
var DefaultPercentiles = []float64{50, 90, 95, 99, 99.9}

// minSamples is how many samples a percentile needs before it is more than
// an order statistic near the maximum: p90 needs 10, p99 100, p99.9 1000.
func minSamples(p float64) int {
	if p >= 100 || p <= 0 {
		return 1
	}
	return int(math.Ceil(1/(1-p/100) - 1e-9))
}

// Pct is one percentile of a distribution.
type Pct struct {
	P     float64 // the percentile, 0–100
	Value float64
}

// Dist summarizes a set of values the way `vllm bench serve` does with
// numpy: mean (np.mean), population standard deviation (np.std, ddof=0),
// median (np.median) and percentiles (np.percentile, linear interpolation).
// Latencies are in milliseconds. A Dist with N == 0 has no figures.
type Dist struct {
	// N is the number of values; Sources the number of requests they came
	// from (N for per-request metrics, fewer than N for pooled ITLs).
	N, Sources                  int
	Mean, Std, Median, Min, Max float64
	// Pcts holds DefaultPercentiles, and those Options.Percentiles adds,
	// in ascending order.
	Pcts []Pct
}

// Pct returns percentile p if the Dist carries it.
func (d Dist) Pct(p float64) (float64, bool) {
	for _, q := range d.Pcts {
		if q.P == p {
			return q.Value, d.N > 0
		}
	}
	return 0, false
}

// NewDist summarizes values (any order; not modified) drawn from sources
// requests.
func NewDist(values []float64, sources int) Dist {
	return distAt(values, sources, DefaultPercentiles)
}

// withDefaults is DefaultPercentiles and extra, ascending, each once.
func withDefaults(extra []float64) []float64 {
	out := slices.Concat(DefaultPercentiles, extra)
	slices.Sort(out)
	return slices.Compact(out)
}

// distAt is NewDist with the percentiles pcts.
func distAt(values []float64, sources int, pcts []float64) Dist {
	d := Dist{N: len(values), Sources: sources}
	if len(values) == 0 {
		return d
	}
	x := slices.Clone(values)
	slices.Sort(x)
	d.Min, d.Max = x[0], x[len(x)-1]
	d.Mean = Mean(values)
	d.Std = Std(values)
	d.Median = Median(x)
	for _, p := range pcts {
		d.Pcts = append(d.Pcts, Pct{P: p, Value: Percentile(x, p)})
	}
	return d
}

// durationsMS converts durations to milliseconds.
func durationsMS(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(time.Millisecond)
	}
	return out
}

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of sorted, exactly as
// numpy.percentile's default method ("linear", Hyndman and Fan's type 7):
// the virtual index h = (n−1)·p/100, interpolated between the order
// statistics either side of it. It is NaN for an empty slice or p outside
// [0, 100] or NaN.
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 || math.IsNaN(p) || p < 0 || p > 100 {
		return math.NaN()
	}
	// numpy divides by 100 first, then takes (n−1)·q ("linear" in
	// _QuantileMethods); the same operations give the same bits.
	q := p / 100
	h := float64(n-1) * q
	if h >= float64(n-1) {
		return sorted[n-1]
	}
	if h < 0 {
		return sorted[0]
	}
	lo := math.Floor(h)
	a, b := sorted[int(lo)], sorted[int(lo)+1]
	return lerp(a, b, h-lo)
}

// lerp is numpy's _lerp: a + (b−a)·t, computed from b's side when t ≥ 0.5
// so that t = 1 gives b exactly.
func lerp(a, b, t float64) float64 {
	diff := b - a
	if t >= 0.5 {
		return b - diff*(1-t)
	}
	return a + diff*t
}

// Median is numpy.median of sorted: the middle value, or the mean of the
// two middle values.
func Median(sorted []float64) float64 {
	n := len(sorted)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return sorted[n/2]
	}
	return Mean(sorted[n/2-1 : n/2+1])
}

// Mean is numpy.mean: numpy's pairwise sum divided by n.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	return pairwiseSum(x) / float64(len(x))
}

// Std is numpy.std with ddof = 0 (the population standard deviation),
// computed as numpy does: sqrt(mean((x − mean(x))²)).
func Std(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	m := Mean(x)
	sq := make([]float64, len(x))
	for i, v := range x {
		d := v - m
		sq[i] = d * d
	}
	return math.Sqrt(pairwiseSum(sq) / float64(len(x)))
}

// pairwiseSum is numpy's pairwise_sum for float64 (numpy/_core/src/umath/
// loops_utils.h.src): plain below 8 values, 8 accumulators up to 128, halves
// above, so that sums, and with them means, match numpy's.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := 0.0
		for _, v := range a {
			res += v
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range 8 {
				r[j] += a[i+j]
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
	}
}
