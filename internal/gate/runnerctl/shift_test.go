package runnerctl

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/gatetest"
	"github.com/vllmperf/vllmperf/internal/gate/input"
)

// parse reads a bench file's text.
func parse(t *testing.T, name, text string) *input.Input {
	t.Helper()
	in, err := input.Read(strings.NewReader(text), name)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestRunnerShifts: the noise is the floor for steady probes and grows
// with their spread; a move is beyond it either way.
func TestRunnerShifts(t *testing.T) {
	t.Parallel()
	line := func(vs ...float64) string {
		var b strings.Builder
		for _, v := range vs {
			fmt.Fprintf(&b, "BenchmarkPerf/profile=basic/scenario=s/conc=1 1 1 tpot-p50-ns %g runner-cpu-ns\n", v)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name       string
		base, next []float64
		wantChange float64
		wantNoise  float64 // at least
		wantMoved  bool
	}{
		{"steady, the same", []float64{100, 100, 101, 99}, []float64{100, 101, 99, 100}, 0, NoiseFloor, false},
		{"steady, 2% slower: within the floor", []float64{100, 100, 101, 99}, []float64{102, 102, 103, 101}, 0.02, NoiseFloor, false},
		{"steady, 5% slower: moved", []float64{100, 100, 101, 99}, []float64{105, 105, 106, 104}, 0.05, NoiseFloor, true},
		{"a spread of ±30% hides 10%", []float64{70, 100, 130, 85, 115}, []float64{77, 110, 143, 93.5, 126.5}, 0.10, 0.2, false},
		{"one burst does not move the median", []float64{100, 100, 100, 100, 100}, []float64{100, 100, 100, 100, 400}, 0, NoiseFloor, false},
	} {
		s := Shifts(parse(t, "base", line(tc.base...)), parse(t, "new", line(tc.next...)))
		if len(s) != 1 {
			t.Fatalf("%s: %d shifts, want 1", tc.name, len(s))
		}
		if got := s[0]; math.Abs(got.Change-tc.wantChange) > 1e-9 || got.Noise < tc.wantNoise || got.Moved() != tc.wantMoved {
			t.Errorf("%s: %+v (moved %v), want change %g, noise ≥ %g, moved %v", tc.name, got, got.Moved(), tc.wantChange, tc.wantNoise, tc.wantMoved)
		}
	}
}

// TestRunnerShiftsMatchBenchmarks: the control is compared over the
// benchmarks both sides ran. Its level differs from point to point, so
// new results of only the slower-reading point against a baseline of
// both would read as a runner 13% slower (the median of 100s and 130s
// against 130s).
func TestRunnerShiftsMatchBenchmarks(t *testing.T) {
	t.Parallel()
	lines := gatetest.RunnerLines
	base := parse(t, "base", lines(map[string]float64{"conc=1": 100, "conc=32": 130}, 4))
	for _, tc := range []struct {
		name       string
		next       map[string]float64
		wantChange float64
		wantMoved  bool
	}{
		{"the busy point alone, as busy as in the baseline", map[string]float64{"conc=32": 130}, 0, false},
		{"the quiet point alone, 10% slower", map[string]float64{"conc=1": 110}, 0.10, true},
		{"both points, as in the baseline", map[string]float64{"conc=1": 100, "conc=32": 130}, 0, false},
	} {
		s := Shifts(base, parse(t, "new", lines(tc.next, 4)))
		if len(s) != 1 {
			t.Fatalf("%s: %d shifts, want 1", tc.name, len(s))
		}
		if got := s[0]; math.Abs(got.Change-tc.wantChange) > 1e-9 || got.Moved() != tc.wantMoved {
			t.Errorf("%s: %+v (moved %v), want change %g, moved %v", tc.name, got, got.Moved(), tc.wantChange, tc.wantMoved)
		}
	}
}
