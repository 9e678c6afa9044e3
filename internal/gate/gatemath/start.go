package gatemath

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// StartSD is the standard deviation of the shift between two sides' mean
// log values (or run scores) b and n with nothing changed, the sides on
// starts of spread σ_s (share: StartShare of their counts):
// √(σ_s²·share + var(b)/|b| + var(n)/|n|), with its Welch-Satterthwaite
// degrees of freedom (the starts' part known: where it dominates, the t
// distribution is about the normal) and the sum (variance)²/df of the
// estimated parts. With several starts a side the runs' variance already
// holds part of the starts' spread, so the sd errs on the large side.
func StartSD(spread, share float64, b, n []float64) (sd, df, satt float64) {
	vb, vn := stats.Variance(b)/float64(len(b)), stats.Variance(n)/float64(len(n))
	total := share*spread*spread + vb + vn
	satt = vb*vb/float64(len(b)-1) + vn*vn/float64(len(n)-1)
	return math.Sqrt(total), SatDF(total, satt), satt
}

// SatDF is the Welch-Satterthwaite degrees of freedom of a variance total
// whose estimated parts sum to satt ((variance)²/df each).
func SatDF(total, satt float64) float64 {
	if satt <= 0 {
		return math.Inf(1)
	}
	return total * total / satt
}

// StartP is the one-sided p of a shift with standard deviation sd: the
// Student t distribution with df degrees of freedom (conservative for
// the sampling part, exact as df grows).
func StartP(shift, sd, df float64) float64 {
	switch {
	case sd > 0 && df > 1e4:
		return 1 - stats.StdNormal.CDF(shift/sd)
	case sd > 0 && df > 0:
		return 1 - stats.TDist{V: df}.CDF(shift/sd)
	case shift > 0:
		return 0
	}
	return 1
}

// AllPositive reports whether every value is a finite number above 0
// (a relative change, and a log, need one).
func AllPositive(vs []float64) bool {
	return !slices.ContainsFunc(vs, func(v float64) bool { return !(v > 0) || math.IsInf(v, 0) })
}

// StartShare is the factor of start_spread² in the variance of the
// shift between a side measured on base starts and one on next starts
// (each side's mean over its starts): 1/base + 1/next, 2 with one start
// a side. Fewer than one start counts as one.
func StartShare(base, next int) float64 {
	return 1/float64(max(1, base)) + 1/float64(max(1, next))
}
