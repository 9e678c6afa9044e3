package gate

import (
	"slices"
	"strconv"
	"sync"

	"github.com/aclements/go-moremath/stats"
)

// mannWhitney is go-moremath's Mann-Whitney U test (stats.MannWhitneyUTest)
// with its U statistic, memoized: go-moremath's p depends on the sample
// sizes, U, the alternative and the tie vector T (the sizes of the merged
// samples' groups of equal values, in order) alone, and building the exact
// U distribution for them is most of a test's time (the gate runs three
// tests a row, the quality measurements thousands of gates; with ties the
// distribution is built anew for every test). The first test of each key
// is go-moremath's own, so every p is exactly its p; errors are never
// memoized.
func mannWhitney(x1, x2 []float64, alt stats.LocationHypothesis) (p, u float64, err error) {
	u, ties := uStatistic(x1, x2)
	key := uKey{len(x1), len(x2), u, alt, ties}
	if p, ok := uMemo.Load(key); ok {
		return p.(float64), u, nil
	}
	res, err := stats.MannWhitneyUTest(x1, x2, alt)
	if err != nil {
		return 0, 0, err
	}
	uMemo.Store(key, res.P)
	return res.P, res.U, nil
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
// n1(n1+1)/2, tied values at their mean rank) and the merged samples' tie
// vector as a key: "" when no two values tie, else the sizes of the groups
// of equal values in order, as go-moremath's T.
func uStatistic(x1, x2 []float64) (u float64, ties string) {
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
	var groups []byte
	tied := false
	for i := 0; i < len(merged); {
		first, n1 := i+1, 0
		for v := merged[i]; i < len(merged) && merged[i] == v; i++ {
			if from1[i] {
				n1++
			}
		}
		if n1 != 0 {
			r1 += float64(i+first) / 2 * float64(n1)
		}
		tied = tied || i > first
		groups = strconv.AppendInt(append(groups, ','), int64(i-first+1), 10)
	}
	if tied {
		ties = string(groups)
	}
	n1 := len(x1)
	return r1 - float64(n1*(n1+1))/2, ties
}
