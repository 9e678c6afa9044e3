package gatemath

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/aclements/go-moremath/mathx"
	"github.com/aclements/go-moremath/stats"
)

// MannWhitney is go-moremath's Mann-Whitney U test (stats.MannWhitneyUTest)
// with its U statistic, memoized: go-moremath's p depends on the sample
// sizes, U, the alternative and the tie vector T (the sizes of the merged
// samples' groups of equal values, in order) alone, and building the exact
// U distribution for them is most of a test's time (the gate runs three
// tests a row, the quality measurements thousands of gates; with ties the
// distribution is built anew for every test). The first test of each key
// is go-moremath's own, so every p is exactly its p, except with ties and
// at most tiesExactTotal values, where tiedP computes the same p (the same
// integer count over the same binomial coefficient) far faster; errors are
// never memoized.
func MannWhitney(x1, x2 []float64, alt stats.LocationHypothesis) (p, u float64, err error) {
	if !allFinite(x1) || !allFinite(x2) {
		return 0, 0, errNotFinite
	}
	u, groups, tied := uStatistic(x1, x2)
	ties := ""
	if tied {
		ties = tieKey(groups)
	}
	key := uKey{len(x1), len(x2), u, alt, ties}
	if p, ok := uMemo.Load(key); ok {
		return p.(float64), u, nil
	}
	if tied && len(groups) > 1 && len(x1)+len(x2) <= tiesExactTotal {
		if p, ok := tiedP(len(x1), len(x2), groups, u, alt); ok {
			uMemo.Store(key, p)
			return p, u, nil
		}
	}
	res, err := stats.MannWhitneyUTest(x1, x2, alt)
	if err != nil {
		return 0, 0, err
	}
	uMemo.Store(key, res.P)
	return res.P, res.U, nil
}

// errNotFinite is a rank test asked to order NaN or ±Inf.
var errNotFinite = errors.New("a sample holds NaN or an infinite value: the U test cannot rank it")

// allFinite reports whether every value of xs is a finite number.
func allFinite(xs []float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// uKey is what go-moremath's test depends on: the sizes, U, the
// alternative and the tie vector ("" without ties, every group of one).
type uKey struct {
	n1, n2 int
	u      float64
	alt    stats.LocationHypothesis
	ties   string
}

// uMemo holds the p of each uKey tested so far: without ties at most
// n1·n2 + 1 values of U for each pair of sizes and alternative; with ties
// one a tie vector seen (the quality measurements' grids repeat few).
var uMemo sync.Map

// uStatistic is U1 as go-moremath computes it (the rank sum of x1 less
// n1(n1+1)/2, tied values at their mean rank), the merged samples' tie
// vector (the sizes of the groups of equal values in order, as
// go-moremath's T) and whether any two values tie.
func uStatistic(x1, x2 []float64) (u float64, groups []int, tied bool) {
	a, b := slices.Clone(x1), slices.Clone(x2)
	slices.Sort(a)
	slices.Sort(b)
	merged := make([]float64, 0, len(a)+len(b))
	from1 := make([]bool, 0, len(a)+len(b))
	for i, j := 0, 0; i < len(a) || j < len(b); {
		if j == len(b) || i < len(a) && a[i] <= b[j] {
			merged, from1 = append(merged, a[i]), append(from1, true)
			i++
		} else {
			merged, from1 = append(merged, b[j]), append(from1, false)
			j++
		}
	}
	r1 := 0.0
	for i := 0; i < len(merged); {
		first, n1 := i+1, 0
		// The group's first value is always taken, so that a value equal
		// to none (NaN) cannot stop the loop; Read refuses NaN anyway.
		for v := merged[i]; i < len(merged) && (i == first-1 || merged[i] == v); i++ {
			if from1[i] {
				n1++
			}
		}
		if n1 != 0 {
			r1 += float64(i+first) / 2 * float64(n1)
		}
		tied = tied || i > first
		groups = append(groups, i-first+1)
	}
	n1 := len(x1)
	return r1 - float64(n1*(n1+1))/2, groups, tied
}

// tieKey is a tie vector as a memo key: ",3,1,2".
func tieKey(groups []int) string {
	var b []byte
	for _, g := range groups {
		b = strconv.AppendInt(append(b, ','), int64(g), 10)
	}
	return string(b)
}

// tiesExactTotal is the most values (n1+n2) for which tiedP matches
// go-moremath exactly: up to 20, mathx.Choose is an exact integer, and so
// is every count of go-moremath's tie algorithm (at most C(20,10)), so
// both compute the same integer count of arrangements with U at most a
// value and divide it by the same binomial coefficient.
const tiesExactTotal = 20

// tiedP is go-moremath's exact p with ties (stats.MannWhitneyUTest with
// UDist{n1, n2, groups}) for U1 = u and alternative alt, from the counts
// of tiedCount. ok is false where go-moremath's CDF is asked below the
// distribution's least U: there its tie algorithm counts arrangements
// that U cannot reach (so 1 − CDF is below 1), and the caller asks
// go-moremath itself, keeping its p exactly.
func tiedP(n1, n2 int, groups []int, u float64, alt stats.LocationHypothesis) (p float64, ok bool) {
	total := mathx.Choose(n1+n2, n1)
	ok = true
	cdf := func(u float64) float64 {
		switch {
		case u < 0:
			return 0
		case u >= float64(n1*n2):
			return 1
		}
		c := tiedCount(n1, groups, int(2*u))
		ok = ok && c > 0
		return float64(c) / total
	}
	switch alt {
	case stats.LocationLess:
		p = cdf(u)
	case stats.LocationGreater:
		p = 1 - cdf(u-1)
	default:
		if u2 := float64(n1*n2) - u; u == u2 {
			p = 1
		} else {
			p = cdf(math.Min(u, u2)) * 2
		}
	}
	return p, ok
}

// tiedCount is how many of the C(n1+n2, n1) ways to pick the first
// sample's ranks under the tie vector groups give 2U ≤ twoU. Picking r of
// a group of t values with mean rank m adds 2m·r to twice the rank sum
// 2R1 (2U = 2R1 − n1(n1+1)), in C(t, r) ways; the count is summed group
// by group over (values picked, 2R1), 2R1 only up to the bound asked.
func tiedCount(n1 int, groups []int, twoU int) uint64 {
	limit := twoU + n1*(n1+1) // the largest 2R1 counted
	if limit < 0 {
		return 0
	}
	w := limit + 1
	// ways[j*w+v]: ways to pick j values so far with 2R1 = v.
	ways := make([]uint64, (n1+1)*w)
	ways[0] = 1
	below := 0 // values in the groups before this one
	for _, t := range groups {
		twoMid := 2*below + t + 1
		for j := min(n1, below+t); j >= 1; j-- { // in place: rows below j are still the old ones
			row := ways[j*w : (j+1)*w]
			c := uint64(1)
			for r := 1; r <= min(t, j); r++ {
				c = c * uint64(t-r+1) / uint64(r) // C(t, r)
				shift := r * twoMid
				if shift > limit {
					break
				}
				from := ways[(j-r)*w : (j-r)*w+w-shift]
				for v, x := range from {
					row[v+shift] += x * c
				}
			}
		}
		below += t
	}
	var n uint64
	for _, x := range ways[n1*w:] {
		n += x
	}
	return n
}
