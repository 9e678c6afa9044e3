package gatemath

import (
	"math"
	"slices"
)

// Holm returns Holm's step-down adjusted p-values (Holm 1979): in
// ascending order the i-th smallest p (from 0) is multiplied by m − i,
// the results made non-decreasing and capped at 1. A test is significant
// when its adjusted p is below α; with one α for all rows this is exactly
// Holm's procedure.
func Holm(ps []float64) []float64 {
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

// cauchyMaxP bounds the p-values the Cauchy combination reads: its
// statistic tan((½ − p)π) runs to −∞ as p → 1, so that a few rows with
// p ≈ 1 (identical runs) would cancel any evidence; past 0.99 a p says
// "no change" as well as 1 does.
const cauchyMaxP = 0.99

// CauchyCombine is the Cauchy combination test (Liu & Xie 2020, "ACAT"):
// with equal weights T = mean of tan((½ − pᵢ)π), and the combined p is
// ½ − arctan(T)/π. T is standard Cauchy under the null whatever the
// dependence between the tests (exactly for independent tests, and in the
// tail for any correlation), which is why it suits metrics of one profile
// measured on the same runs (TPOT and tok/s move together). NaN p-values
// are skipped; none at all is 1.
func CauchyCombine(ps []float64) float64 {
	var sum float64
	n := 0
	for _, p := range ps {
		if math.IsNaN(p) {
			continue
		}
		p = min(max(p, 1e-300), cauchyMaxP)
		if p < 1e-15 { // tan((½ − p)π) ≈ 1/(pπ) without rounding to +Inf
			sum += 1 / (p * math.Pi)
		} else {
			sum += math.Tan((0.5 - p) * math.Pi)
		}
		n++
	}
	if n == 0 {
		return 1
	}
	t := sum / float64(n)
	if t > 1e15 {
		return 1 / (t * math.Pi)
	}
	return min(1, max(0, 0.5-math.Atan(t)/math.Pi))
}

// headlineWeight is the headline test's share of a profile's α when the
// profile has tail tests; the tail tests share the rest equally.
const headlineWeight = 0.5

// ComponentWeight is a profile's test's share of its α: headlineWeight
// for the headline test among tail tests, an equal share of the rest for
// a tail test, all of it for a test alone.
func ComponentWeight(headline bool, hasHeadline bool, tails int) float64 {
	switch {
	case tails == 0 || !hasHeadline:
		if headline {
			return 1
		}
		return 1 / float64(tails)
	case headline:
		return headlineWeight
	default:
		return (1 - headlineWeight) / float64(tails)
	}
}
