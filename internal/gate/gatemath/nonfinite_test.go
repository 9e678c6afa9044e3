package gatemath

import (
	"math"
	"testing"
	"time"

	"github.com/aclements/go-moremath/stats"
)

// TestMannWhitneyNonFinite: the U test refuses NaN and ±Inf at once (its
// tie loop once spun on NaN, growing without bound).
func TestMannWhitneyNonFinite(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		done := make(chan error, 1)
		go func() {
			_, _, err := MannWhitney([]float64{1, 2, bad}, []float64{1, 3, 4}, stats.LocationDiffers)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%v: no error", bad)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: the test did not return", bad)
		}
	}
}

// TestUStatisticNaNEnds: the tie grouping ends on NaN (each NaN its own
// group) instead of spinning.
func TestUStatisticNaNEnds(t *testing.T) {
	_, groups, _ := uStatistic([]float64{math.NaN(), 1}, []float64{math.NaN(), 2})
	if n := len(groups); n != 4 {
		t.Errorf("%d groups, want 4 (two NaN groups of one, 1, 2)", n)
	}
}
