package gate

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestCauchyCombine checks the combination's known values.
func TestCauchyCombine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ps   []float64
		want float64
	}{
		// One test: its own p.
		{"one", []float64{0.03}, 0.03},
		// Equal p-values combine to the same p (the statistic is their tan).
		{"equal", []float64{0.2, 0.2, 0.2}, 0.2},
		// One tiny p among k: about k times it (Bonferroni-like).
		{"one small of four", []float64{1e-6, 0.5, 0.5, 0.5}, 4e-6},
		// p ≈ 1 is capped at 0.99, so that it cannot cancel strong evidence.
		{"capped near 1", []float64{1e-6, 1}, 2e-6},
		// Nothing to combine.
		{"none", []float64{math.NaN()}, 1},
	} {
		got := cauchyCombine(tc.ps)
		if math.Abs(got-tc.want) > 0.02*tc.want {
			t.Errorf("%s: cauchyCombine(%v) = %g, want %g", tc.name, tc.ps, got, tc.want)
		}
	}
}

// TestCauchyCombineNull: under no change, with strongly correlated tests
// (one profile's metrics move together), the combined p still falls below
// 0.05 about 5% of the time.
func TestCauchyCombineNull(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 9))
	const trials = 20000
	below := 0
	for range trials {
		shared := rng.NormFloat64()
		ps := make([]float64, 12)
		for i := range ps {
			z := 0.8*shared + 0.6*rng.NormFloat64() // correlation 0.64
			ps[i] = 2 * (1 - normCDF(math.Abs(z)))
		}
		if cauchyCombine(ps) < 0.05 {
			below++
		}
	}
	if rate := float64(below) / trials; rate > 0.06 {
		t.Errorf("combined p < 0.05 in %.1f%% of null trials, want ≤ 6%%", 100*rate)
	}
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
