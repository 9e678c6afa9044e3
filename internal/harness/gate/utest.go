package gate

import (
	"slices"
	"sync"

	"github.com/aclements/go-moremath/stats"
)

// mannWhitney is go-moremath's Mann-Whitney U test (stats.MannWhitneyUTest)
// with its U statistic, memoized where the answer depends on the sample
// sizes and U alone: without ties and within the exact limit, the exact
// U distribution is that of (n1, n2), and building it is most of a test's
// time (the gate runs three tests a row, the quality measurements
// thousands of gates). The first test of each (n1, n2, U, alternative) is
// go-moremath's own, so every p is exactly its p; samples with ties, or
// beyond the exact limit, go to it every time.
func mannWhitney(x1, x2 []float64, alt stats.LocationHypothesis) (p, u float64, err error) {
	u, ties := uStatistic(x1, x2)
	n1, n2 := len(x1), len(x2)
	if ties || n1 == 0 || n2 == 0 || n1 > stats.MannWhitneyExactLimit || n2 > stats.MannWhitneyExactLimit {
		res, err := stats.MannWhitneyUTest(x1, x2, alt)
		if err != nil {
			return 0, 0, err
		}
		return res.P, res.U, nil
	}
	key := uKey{n1, n2, u, alt}
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

// uKey is what an exact test without ties depends on.
type uKey struct {
	n1, n2 int
	u      float64
	alt    stats.LocationHypothesis
}

// uMemo holds the p of each uKey tested so far: at most a few thousand
// floats (n1·n2 + 1 values of U for each pair of sizes and alternative).
var uMemo sync.Map

// uStatistic is U1 as go-moremath computes it (the rank sum of x1 less
// n1(n1+1)/2, tied values at their mean rank), and whether any two values
// of the merged samples tie.
func uStatistic(x1, x2 []float64) (u float64, ties bool) {
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
		for v := merged[i]; i < len(merged) && merged[i] == v; i++ {
			if from1[i] {
				n1++
			}
		}
		if n1 != 0 {
			r1 += float64(i+first) / 2 * float64(n1)
		}
		if i > first {
			ties = true
		}
	}
	n1 := len(x1)
	return r1 - float64(n1*(n1+1))/2, ties
}
