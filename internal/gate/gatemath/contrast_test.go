package gatemath

import (
	"math"
	"testing"
)

// TestPointWeights checks the points test's weights: they sum to 1, none
// is below half the even share, the even half alone when no test has a
// noncentrality, and more weight to a test near the line than to one a
// change would pass by far or could never reach.
func TestPointWeights(t *testing.T) {
	for _, tc := range []struct {
		name string
		xi   []float64
		// near, far: a test expected to outweigh another (-1: none).
		near, far int
	}{
		{name: "even", xi: []float64{5, 5, 5, 5}, near: -1},
		{name: "near the line beats far past it", xi: []float64{4, 30, 30, 30}, near: 0, far: 1},
		{name: "near the line beats out of reach", xi: []float64{0.2, 4, 30}, near: 1, far: 0},
		{name: "no noncentrality", xi: []float64{math.NaN(), 0, math.Inf(1)}, near: -1},
		{name: "one test", xi: []float64{3}, near: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := PointWeights(tc.xi, 0.05/7)
			sum := 0.0
			for j, x := range w {
				sum += x
				if x < 0.5/float64(len(w))-1e-12 {
					t.Errorf("weight %d = %g, below half the even share %g", j, x, 0.5/float64(len(w)))
				}
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Errorf("weights %v sum to %g, want 1", w, sum)
			}
			if tc.near >= 0 && w[tc.near] <= w[tc.far] {
				t.Errorf("weights %v: test %d (ξ %g) should outweigh test %d (ξ %g)", w, tc.near, tc.xi[tc.near], tc.far, tc.xi[tc.far])
			}
			if tc.name == "even" || tc.name == "no noncentrality" {
				for j, x := range w {
					if math.Abs(x-1/float64(len(w))) > 1e-9 {
						t.Errorf("weight %d = %g, want the even %g", j, x, 1/float64(len(w)))
					}
				}
			}
		})
	}
}
