package history

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// member is a benchmark's series with one median per run (runs from 0).
func member(bench, unit string, dir units.Direction, medians ...float64) *Series {
	s := &Series{Key: "k", Benchmark: "Perf/profile=basic/" + bench, Profile: "basic", Unit: unit, Direction: dir}
	for i, m := range medians {
		s.Points = append(s.Points, Point{Run: i, Median: m})
	}
	return s
}

func TestProfileSeries(t *testing.T) {
	a := member("a", "tpot-p50-ns", units.Lower, 1, 4, 9)
	b := member("b", "tpot-p50-ns", units.Lower, 4, 1, 1)
	gapped := member("c", "tpot-p50-ns", units.Lower, 2, 2)
	gapped.Points[1].Run = 2 // c did not run at run 1
	for _, tc := range []struct {
		name    string
		in      []*Series
		want    []float64 // the profile series' medians; nil for none
		members int
	}{
		{"geometric mean of two", []*Series{a, b}, []float64{2, 2, 3}, 2},
		{"a run that one member lacks is left out", []*Series{a, b, gapped}, []float64{2, math.Cbrt(18)}, 3},
		{"one benchmark: no profile series", []*Series{a}, nil, 0},
		{"a value ≤ 0 cannot be averaged in logs: that member is left out", []*Series{a, b, member("z", "tpot-p50-ns", units.Lower, 0, 1, 1)}, []float64{2, 2, 3}, 2},
		{"directions differ", []*Series{a, member("d", "tpot-p50-ns", units.Higher, 1, 1, 2)}, nil, 0},
		{"units apart", []*Series{a, member("e", "tok/s", units.Higher, 1, 1, 2)}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := profileSeries("k", tc.in)
			if tc.want == nil {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			p := got[0]
			assert.Len(t, p.Members, tc.members)
			assert.Equal(t, ProfileBenchmark("basic", tc.members), p.Benchmark)
			assert.Equal(t, units.Lower, p.Direction)
			require.Len(t, p.Points, len(tc.want))
			for i, w := range tc.want {
				assert.InDelta(t, w, p.Points[i].Median, 1e-9, "point %d", i)
			}
		})
	}
}

// TestProfileChangeFindsItsBenchmarks: three benchmarks 4% slower from
// run 9 of 16 with 1.5% noise, a step of 2.7 standard deviations each; the
// profile's series (noise 1.5%/√3) places it at run 9, and each benchmark,
// tested there, is reported at run 9 as found by its profile's change.
// Without a step, nothing is reported.
func TestProfileChangeFindsItsBenchmarks(t *testing.T) {
	points := func(size float64) map[string]map[string]step {
		out := map[string]map[string]step{}
		for _, p := range []string{"short", "medium", "long"} {
			out[fmt.Sprintf("profile=basic/scenario=ttft-tpot/prompt=%s/conc=1", p)] = map[string]step{"tpot-p50-ns": {level: 2e7, noise: 0.015, size: size, at: 9}}
		}
		return out
	}
	rep, err := Check(grouped(t, syntheticStore(t, 16, 1, points(0.04), nil, nil)), DefaultCheck)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Keys[0].Profiles, "tpot-p50-ns of the 3 benchmarks (ns/op is 1000 throughout: constant)")
	assert.Equal(t, 4, rep.Tested)
	var profile []Change
	bench := map[string]Change{}
	for _, c := range rep.Changes {
		if len(c.Members) > 0 {
			profile = append(profile, c)
			continue
		}
		bench[c.Benchmark] = c
	}
	require.Len(t, profile, 1)
	assert.Equal(t, ProfileBenchmark("basic", 3), profile[0].Benchmark)
	assert.Equal(t, 8, profile[0].Run.Index, "the profile's change starts at run 9")
	assert.Equal(t, "the profile's series", profile[0].FoundBy())
	require.Len(t, bench, 3, "each benchmark reported once")
	for name, c := range bench {
		assert.Equal(t, 8, c.Run.Index, name)
		assert.True(t, c.Regression, name)
		if c.Via != "" {
			assert.Equal(t, profile[0].Benchmark, c.Via)
			assert.Equal(t, "its profile's change", c.FoundBy())
		}
	}
	t.Log(rep.Headline())

	rep, err = Check(grouped(t, syntheticStore(t, 16, 1, points(0), nil, nil)), DefaultCheck)
	require.NoError(t, err)
	assert.Empty(t, rep.Changes, "no step, no change")
}
