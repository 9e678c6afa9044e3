package changepoint

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// qDirect is Q̂(τ, κ) written out from Matteson and James's definition,
// pair by pair, to check BestSplit's prefix sums.
func qDirect(v []float64, tau, kappa int) float64 {
	x, y := v[:tau], v[tau:kappa]
	m, n := float64(len(x)), float64(len(y))
	var cross, wx, wy float64
	for _, a := range x {
		for _, b := range y {
			cross += math.Abs(a - b)
		}
	}
	for i := range x {
		for k := i + 1; k < len(x); k++ {
			wx += math.Abs(x[i] - x[k])
		}
	}
	for j := range y {
		for k := j + 1; k < len(y); k++ {
			wy += math.Abs(y[j] - y[k])
		}
	}
	e := 2*cross/(m*n) - wx/(m*(m-1)/2) - wy/(n*(n-1)/2)
	return m * n / (m + n) * e
}

func TestBestSplitMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		name    string
		n, min  int
		shiftAt int // 0: no shift
	}{
		{"noise, shortest splittable", 4, 2, 0},
		{"noise", 16, 3, 0},
		{"step at 9 of 16", 16, 3, 8},
		{"step near the end", 20, 2, 17},
		{"long", 60, 5, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := make([]float64, tc.n)
			for i := range v {
				v[i] = 100 + rng.NormFloat64()
				if tc.shiftAt > 0 && i >= tc.shiftAt {
					v[i] += 5
				}
			}
			wantTau, wantKappa, wantQ := -1, -1, math.Inf(-1)
			for tau := tc.min; tau <= tc.n-tc.min; tau++ {
				for kappa := tau + tc.min; kappa <= tc.n; kappa++ {
					if q := qDirect(v, tau, kappa); q > wantQ {
						wantTau, wantKappa, wantQ = tau, kappa, q
					}
				}
			}
			gotTau, gotKappa, gotQ := BestSplit(v, tc.min)
			assert.Equal(t, wantTau, gotTau)
			assert.Equal(t, wantKappa, gotKappa)
			assert.InDelta(t, wantQ, gotQ, 1e-9*math.Abs(wantQ))
			if tc.shiftAt > 0 {
				assert.Equal(t, tc.shiftAt, gotTau, "a 5σ step is found where it is")
				assert.Equal(t, tc.n, gotKappa, "a step that lasts is compared with the rest of the series")
			}
		})
	}
}

func TestBestSplitTooShort(t *testing.T) {
	tau, kappa, q := BestSplit([]float64{1, 2, 3, 4, 5}, 3)
	assert.Equal(t, -1, tau)
	assert.Equal(t, -1, kappa)
	assert.True(t, math.IsNaN(q))
}

// series is n observations of mean 100 and sd 1, plus step from index at.
func series(seed uint64, n, at int, step float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	v := make([]float64, n)
	for i := range v {
		v[i] = 100 + rng.NormFloat64()
		if at > 0 && i >= at {
			v[i] += step
		}
	}
	return v
}

func TestSegmentFindsOneStep(t *testing.T) {
	cps, err := Segment(series(1, 16, 8, 4), 0.01, Options{Seed: 1})
	require.NoError(t, err)
	require.Len(t, cps, 1, "one step, one change point")
	c := cps[0]
	assert.Equal(t, 8, c.Index)
	assert.Less(t, c.P, 0.001)
	assert.Equal(t, DefaultPermutations, c.Permutations, "a clear change runs every permutation")
	assert.Less(t, c.Exceeded, DefaultExceedances)
}

func TestSegmentFindsTwoSteps(t *testing.T) {
	v := series(2, 30, 10, 5)
	for i := 20; i < 30; i++ {
		v[i] -= 10 // down again, below the start
	}
	cps, err := Segment(v, 0.01, Options{Seed: 2, Permutations: 999})
	require.NoError(t, err)
	var idx []int
	for _, c := range cps {
		idx = append(idx, c.Index)
	}
	assert.ElementsMatch(t, []int{10, 20}, idx)
}

// TestSegmentFindsAChangeThatIsUndone: up at 6, back down at 14 of 20 (a
// regression and its fix). The ends look alike, so only a split with its
// own end κ sees it (Matteson and James's κ).
func TestSegmentFindsAChangeThatIsUndone(t *testing.T) {
	v := series(6, 20, 6, 4)
	for i := 14; i < 20; i++ {
		v[i] -= 4
	}
	cps, err := Segment(v, 0.01, Options{Seed: 6, Permutations: 999})
	require.NoError(t, err)
	var idx []int
	for _, c := range cps {
		idx = append(idx, c.Index)
	}
	assert.ElementsMatch(t, []int{6, 14}, idx)
}

func TestSegmentNoiseOnly(t *testing.T) {
	cps, err := Segment(series(3, 16, 0, 0), 0.05, Options{Seed: 3})
	require.NoError(t, err)
	assert.Empty(t, cps)
}

func TestSegmentConstant(t *testing.T) {
	cps, err := Segment([]float64{5, 5, 5, 5, 5, 5, 5, 5}, 0.05, Options{})
	require.NoError(t, err)
	assert.Empty(t, cps)
	_, err = New([]float64{5, 5, 5, 5, 5, 5}, Options{})
	assert.ErrorIs(t, err, ErrConstant)
}

func TestNextStopsEarlyWithoutAChange(t *testing.T) {
	d, err := New(series(4, 16, 0, 0), Options{Seed: 4})
	require.NoError(t, err)
	c, ok := d.Next()
	require.True(t, ok)
	assert.Equal(t, DefaultExceedances, c.Exceeded, "stopped at h exceedances")
	assert.Less(t, c.Permutations, 2000, "noise costs a few hundred permutations")
	assert.InDelta(t, float64(c.Exceeded)/float64(c.Permutations), c.P, 1e-12)
}

func TestSameSeedSameP(t *testing.T) {
	v := series(5, 16, 8, 1.2)
	a, err := Segment(v, 1, Options{Seed: 9, Permutations: 499})
	require.NoError(t, err)
	b, err := Segment(v, 1, Options{Seed: 9, Permutations: 499})
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// TestPValuesCalibrated: on series without a change the permutation test
// is significant at 5% in about 5% of series (it is exact up to the Monte
// Carlo error), and a 3σ step after 8 of 16 observations is found, at its
// place ±1, in nearly all (measured: 93%; a 2σ step 62%, 4σ 100%).
func TestPValuesCalibrated(t *testing.T) {
	const n = 300
	null, found := 0, 0
	for i := range n {
		d, err := New(series(uint64(100+i), 16, 0, 0), Options{Seed: uint64(i), Permutations: 399})
		require.NoError(t, err)
		if c, _ := d.Next(); c.P <= 0.05 {
			null++
		}
		d, err = New(series(uint64(1000+i), 16, 8, 3), Options{Seed: uint64(i), Permutations: 399})
		require.NoError(t, err)
		if c, _ := d.Next(); c.P <= 0.05 && c.Index >= 7 && c.Index <= 9 {
			found++
		}
	}
	rate := float64(null) / n
	t.Logf("no change: %d of %d significant at 5%% (%.1f%%); 3σ step: %d of %d found at 8±1", null, n, 100*rate, found, n)
	assert.InDelta(t, 0.05, rate, 0.03, "false alarms at 5%")
	assert.Greater(t, found, n*85/100, "a 3σ step is found")
}

// TestNewRejectsBadInput: New, and NewFixed for the cases with a split.
func TestNewRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []float64
		tau  int // > 0: NewFixed's split
		opts Options
		want string
	}{
		{"NaN", []float64{1, math.NaN(), 3}, 0, Options{}, "observation 1 is NaN"},
		{"infinity", []float64{1, 2, math.Inf(1)}, 0, Options{}, "observation 2 is +Inf"},
		{"segment of one", []float64{1, 2, 3}, 0, Options{MinSize: 1}, "at least 2"},
		{"no permutations", []float64{1, 2, 3}, 0, Options{Permutations: -1}, "want at least 1"},
		{"split: too few before", []float64{1, 2, 3, 4, 5, 6}, 2, Options{}, "split 2 of 6 observations: each side needs at least 3"},
		{"split: too few after", []float64{1, 2, 3, 4, 5, 6}, 4, Options{}, "each side needs at least 3"},
		{"split: segment of one", []float64{1, 2, 3, 4}, 2, Options{MinSize: 1}, "each side needs at least 2"},
		{"split: no permutations", []float64{1, 2, 3, 4, 5, 6}, 3, Options{Permutations: -1}, "Permutations -1"},
		{"split: NaN", []float64{1, 2, 3, math.NaN(), 5, 6}, 3, Options{}, "observation 3 is NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.tau > 0 {
				_, err = NewFixed(tc.xs, tc.tau, tc.opts)
			} else {
				_, err = New(tc.xs, tc.opts)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestDecideAgreesWithTheWholeTest: Decide's answer is the whole test's
// (p ≤ cutoff), the whole test's p lies within the Bounds at every step,
// and a clear change is decided after far fewer permutations.
func TestDecideAgreesWithTheWholeTest(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261205, 7))
	for _, step := range []float64{0, 1, 4} {
		for rep := range 3 {
			xs := make([]float64, 24)
			for i := range xs {
				xs[i] = rng.NormFloat64()
				if i >= 12 {
					xs[i] += step
				}
			}
			opts := Options{Seed: uint64(rep + 1), Permutations: 999}
			whole, err := New(xs, opts)
			require.NoError(t, err)
			full, ok := whole.Next()
			require.True(t, ok)
			require.True(t, full.Done)
			for _, cutoff := range []float64{0.0005, 0.01, 0.05, 0.2} {
				d, err := New(xs, opts)
				require.NoError(t, err)
				c, ok := d.Propose()
				require.True(t, ok)
				require.Equal(t, full.Index, c.Index)
				for n := 10; !c.Done; n *= 2 {
					d.Extend(&c, n)
					lo, hi := c.Bounds()
					require.True(t, lo <= full.P && full.P <= hi, "step %g: p %g outside [%g, %g] after %d permutations", step, full.P, lo, hi, c.Permutations)
				}
				require.Equal(t, full.P, c.P, "run to its end, the test is the whole test")
				d2, err := New(xs, opts)
				require.NoError(t, err)
				c2, _ := d2.Propose()
				require.Equal(t, full.P <= cutoff, d2.Decide(&c2, cutoff), "step %g, cutoff %g: p %g", step, cutoff, full.P)
				if step >= 4 && cutoff >= 0.05 {
					require.Less(t, c2.Permutations, full.Permutations/2, "a clear change decided early")
				}
			}
		}
	}
}

// BenchmarkBestSplit is one evaluation of every (τ, κ) of a 300-run
// series (the prefix sums, then the search), what each permutation costs
// on a 300-run store:
//
//	go test -run '^$' -bench BestSplit ./internal/results/history/changepoint/
func BenchmarkBestSplit(b *testing.B) {
	rng := rand.New(rand.NewPCG(20261205, 8))
	xs := make([]float64, 300)
	for i := range xs {
		xs[i] = rng.NormFloat64()
	}
	var sums pairSums
	for range b.N {
		sums.reset(xs)
		sums.bestSplit(0, len(xs), DefaultMinSize)
	}
}

// BenchmarkFixedPermutation times one permutation of the test of a
// given split at n = 300 (a shuffle and two sorts), beside
// BenchmarkBestSplit's search.
func BenchmarkFixedPermutation(b *testing.B) {
	rng := rand.New(rand.NewPCG(20261205, 8))
	xs := make([]float64, 300)
	for i := range xs {
		xs[i] = rng.NormFloat64()
	}
	f, err := NewFixed(xs, 200, Options{Permutations: math.MaxInt32, Exceedances: math.MaxInt32})
	require.NoError(b, err)
	b.ResetTimer()
	for range b.N {
		f.Extend(f.Candidate().Permutations + 1)
	}
}

// TestFixedSplit: the test of a given split holds its level on series
// without a change, and finds a 2σ step at the split more often than the
// search over every split does (it need not pay for the search).
func TestFixedSplit(t *testing.T) {
	const n = 300
	null, fixed, searched := 0, 0, 0
	for i := range n {
		c, err := FixedSplit(series(uint64(2000+i), 16, 0, 0), 8, Options{Seed: uint64(i), Permutations: 399})
		require.NoError(t, err)
		require.Equal(t, 8, c.Index)
		require.True(t, c.Done)
		if c.P <= 0.05 {
			null++
		}
		step := series(uint64(3000+i), 16, 8, 2)
		if c, err = FixedSplit(step, 8, Options{Seed: uint64(i), Permutations: 399}); err == nil && c.P <= 0.05 {
			fixed++
		}
		d, err := New(step, Options{Seed: uint64(i), Permutations: 399})
		require.NoError(t, err)
		if c, _ := d.Next(); c.P <= 0.05 && c.Index >= 7 && c.Index <= 9 {
			searched++
		}
	}
	rate := float64(null) / n
	t.Logf("no change: %d of %d significant at 5%% (%.1f%%); 2σ step at the split: %d of %d found, %d by the search at 8±1", null, n, 100*rate, fixed, n, searched)
	assert.InDelta(t, 0.05, rate, 0.03, "false alarms at 5%")
	assert.Greater(t, fixed, n*85/100, "a 2σ step at the split is found")
	assert.Greater(t, fixed, searched, "more often than by searching for it")
}

// TestFixedStatMatchesDefinition: the test of a given split computes its
// Q̂ from sorted sums; it is the definition's.
func TestFixedStatMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for _, n := range []int{6, 17, 64} {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64() * 3
		}
		v[n/2] = v[1] // a tie
		for tau := 3; tau <= n-3; tau++ {
			f, err := NewFixed(v, tau, Options{})
			require.NoError(t, err)
			assert.InDelta(t, qDirect(v, tau, n), f.Candidate().Stat, 1e-9*math.Max(1, math.Abs(qDirect(v, tau, n))), "n %d τ %d", n, tau)
		}
	}
}
