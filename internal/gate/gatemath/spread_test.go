package gatemath

import (
	"math"
	"testing"
)

// TestChiSquareQuantile: the 5% quantiles of χ² with 1, 10 and 35 degrees
// of freedom (tables: 0.00393, 3.940, 22.465).
func TestChiSquareQuantile(t *testing.T) {
	for _, tc := range []struct{ df, want float64 }{{1, 0.00393}, {10, 3.940}, {35, 22.465}} {
		if got := ChiSquareQuantile(0.05, tc.df); math.Abs(got-tc.want) > 0.002*max(1, tc.want) {
			t.Errorf("χ²(%g) 5%%: %.5f, want %.5f", tc.df, got, tc.want)
		}
	}
}
