package startspread

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/gatetest"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestEstimateStartSpread: recordings of the suite, each with its own
// start factor per profile, give back the start spread they were drawn
// with; recordings on one start give none; too few or disjoint files are
// refused by name.
func TestEstimateStartSpread(t *testing.T) {
	t.Parallel()
	recordings := func(spread float64) []*input.Input {
		rng := rand.New(rand.NewPCG(31, 7))
		var out []*input.Input
		for r := range 8 {
			f := map[string]float64{}
			for _, p := range gatetest.FiveProfiles.Profiles {
				f[p] = math.Exp(spread * rng.NormFloat64())
			}
			_, next := gatetest.FiveProfiles.Pair(t, uint64(400+r), gatetest.SlowProfiles(f))
			out = append(out, next)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		spread float64
		lo, hi float64
	}{
		{"starts 3% apart", 0.03, 0.02, 0.04},
		{"no start effect", 0, 0, 0.01},
	} {
		est, err := EstimateStartSpread(recordings(tc.spread))
		if err != nil {
			t.Fatal(err)
		}
		if est.Spread < tc.lo || est.Spread > tc.hi || est.Files != 8 || len(est.Profiles) != 5 || est.Cells != 5*6*4 {
			t.Errorf("%s: %+v, want a spread in %g–%g from 8 files, 5 profiles, 120 cells", tc.name, est, tc.lo, tc.hi)
		}
		if !strings.Contains(est.String(), "per profile: basic ") || !strings.Contains(est.String(), "recommended, at the upper bounds") {
			t.Errorf("%s: %s", tc.name, est)
		}
		// Every judged metric, the tails too, with an upper bound above
		// the estimate from (8−1)·5 degrees of freedom.
		tails := 0
		for _, u := range est.Units {
			if units.IsTail(u.Unit) {
				tails++
			}
			if u.DF != 35 || u.Upper < u.Spread || u.Upper > tc.hi+0.05 || u.Cells != 30 {
				t.Errorf("%s: %+v: want 30 cells, 35 degrees of freedom, an upper bound above the estimate", tc.name, u)
			}
		}
		if len(est.Units) != len(gatetest.ShapeUnits) || tails != len(units.Tails) {
			t.Errorf("%s: %d metrics (%d tails), want %d (%d)", tc.name, len(est.Units), tails, len(gatetest.ShapeUnits), len(units.Tails))
		}
	}

	one, _ := gatetest.FiveProfiles.Pair(t, 1, nil)
	other, err := input.Read(strings.NewReader("BenchmarkOther 1 5 tpot-p50-ns\nBenchmarkOther 1 6 tpot-p50-ns\n"), "other.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		files []*input.Input
		want  string
	}{
		{"one recording", []*input.Input{one}, "at least two recordings"},
		{"nothing in common", []*input.Input{one, other}, "no headline metric of a point is in every recording"},
	} {
		if _, err := EstimateStartSpread(tc.files); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
