package runnerctl

import (
	"fmt"
	"math"
	"slices"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Reading the control back (docs/gate.md "A slower runner"):
// every run of the suite records the time of a fixed CPU workload in the
// client process, which depends on the machine and not on the system
// under test. When it moved between the baseline and the new results by
// more than its noise, the runner itself changed, and a regression no
// larger than the runner's slowdown explains is INVALID, not a
// REGRESSION.
const (
	// NoiseFloor is the smallest move of the control's median the
	// gate calls a move of the runner (3%: a quiet machine's CPU clock and
	// cache state vary by about 1% between sessions).
	NoiseFloor = 0.03
	// NoiseSE is how many standard errors of the difference of the
	// two sides' log medians a move must also exceed.
	NoiseSE = 3.0
	// BoundZ is the one-sided normal quantile (95%) of the bounds a
	// move of the runner is judged by: a slower runner explains a
	// regression only up to its slowdown's lower bound, and a faster one
	// hides one at least up to its speed-up's lower bound (the control's
	// own uncertainty is never read in the change's favour).
	BoundZ = 1.645
	// MinRuns is the fewest runs a side with the control from which
	// the gate compares it: one or two probes' medians cannot say what
	// the runner's noise is.
	MinRuns = 3
)

// JudgedUnits are the runner control's units the gate judges: the serial
// probes (units.RunnerIdle, taken with the server idle, in place of
// units.RunnerCPU where both sides record it) and the parallel ones.
var JudgedUnits = []string{units.RunnerCPU, units.RunnerParallel}

// RecordedUnits are the runner units a file may record.
var RecordedUnits = []string{units.RunnerCPU, units.RunnerIdle, units.RunnerParallel}

// IsUnit reports whether unit is one of the runner control's.
func IsUnit(unit string) bool { return slices.Contains(RecordedUnits, unit) }

// Shift is how the runner control moved between the two sides in
// one unit, over every run of every benchmark of each side.
type Shift struct {
	Unit string
	// Baseline and New are the sides' medians (ns per block of the
	// workload); NBaseline and NNew their runs.
	Baseline, New   float64
	NBaseline, NNew int
	// Change is New/Baseline − 1: 0.2 when the runner took 20% longer.
	Change float64
	// Noise is the smallest change called a move: NoiseFloor, or
	// NoiseSE standard errors of the log ratio of the medians when
	// that is more.
	Noise float64
	// SE is the standard error of the log ratio of the medians.
	SE float64
}

// SlowerBy is the runner's slowdown at its lower bound (BoundZ
// standard errors under the measured one; 0 when not slower): what it
// can explain of a regression.
func (s Shift) SlowerBy() float64 {
	if !s.Slower() {
		return 0
	}
	return max(0, math.Expm1(math.Log1p(s.Change)-BoundZ*s.SE))
}

// FasterBy is the runner's speed-up at its lower bound, as the share by
// which a change of the new side reads better than it is (0 when not
// faster): a regression up to it can be hidden.
func (s Shift) FasterBy() float64 {
	if !s.Moved() || s.Change >= 0 {
		return 0
	}
	return max(0, -math.Expm1(math.Log1p(s.Change)+BoundZ*s.SE))
}

// Moved reports whether the runner moved by more than its noise, either
// way.
func (s Shift) Moved() bool { return math.Abs(math.Log1p(s.Change)) > math.Log1p(s.Noise) }

// Slower reports whether the runner moved, slower.
func (s Shift) Slower() bool { return s.Moved() && s.Change > 0 }

// Describe is the shift in words, with its numbers.
func (s Shift) Describe() string {
	how := "within its noise"
	switch {
	case s.Slower():
		how = fmt.Sprintf("the runner was %.1f%% slower", 100*s.Change)
	case s.Moved():
		how = fmt.Sprintf("the runner was %.1f%% faster", -100*s.Change)
	}
	return fmt.Sprintf("%s: %s %s → %s a block (%+.1f%%, noise ±%.1f%%, %d+%d runs)",
		how, s.Unit, units.FormatValue(s.Unit, s.Baseline), units.FormatValue(s.Unit, s.New), 100*s.Change, 100*s.Noise, s.NBaseline, s.NNew)
}

// Values are an input's runner control values by unit, from the
// runs of the benchmarks in only (every benchmark when only is nil).
func Values(in *input.Input, only map[string]bool) map[string][]float64 {
	out := map[string][]float64{}
	for _, r := range in.Results {
		if only != nil && !only[input.BenchmarkName(r)] {
			continue
		}
		for _, v := range r.Values {
			if u, x := input.AsWritten(v); slices.Contains(RecordedUnits, u) && x > 0 && !math.IsInf(x, 0) {
				out[u] = append(out[u], x)
			}
		}
	}
	return out
}

// MinLen is the fewest values of any unit in vs.
func MinLen(vs map[string][]float64) int {
	n := -1
	for _, v := range vs {
		if n < 0 || len(v) < n {
			n = len(v)
		}
	}
	return max(n, 0)
}

// Shifts compares the runner control of the two sides: one shift
// per unit both record, over the runs of the benchmarks both sides ran.
// The control's level differs from point to point (in baselines/sim.txt
// the short points read slower), so a side that ran only
// some of the other's points would otherwise read as a slower or faster
// runner.
func Shifts(base, next *input.Input) []Shift {
	shared := SharedBenchmarks(base, next)
	bv, nv := Values(base, shared), Values(next, shared)
	judged := JudgedUnits
	if len(bv[units.RunnerIdle]) > 0 && len(nv[units.RunnerIdle]) > 0 {
		judged = []string{units.RunnerIdle, units.RunnerParallel} // the server idle: its own CPU use cannot move it
	}
	var out []Shift
	for _, u := range judged {
		b, n := bv[u], nv[u]
		if len(b) == 0 || len(n) == 0 {
			continue
		}
		mb, sb := gatemath.LogMedianSE(b)
		mn, sn := gatemath.LogMedianSE(n)
		out = append(out, Shift{
			Unit: u, Baseline: math.Exp(mb), New: math.Exp(mn), NBaseline: len(b), NNew: len(n),
			Change: math.Expm1(mn - mb),
			Noise:  max(NoiseFloor, math.Expm1(NoiseSE*math.Hypot(sb, sn))),
			SE:     math.Hypot(sb, sn),
		})
	}
	return out
}

// SharedBenchmarks are the benchmarks (without go test's -N suffix) that
// both sides ran.
func SharedBenchmarks(base, next *input.Input) map[string]bool {
	inBase := map[string]bool{}
	for _, r := range base.Results {
		inBase[input.BenchmarkName(r)] = true
	}
	shared := map[string]bool{}
	for _, r := range next.Results {
		if n := input.BenchmarkName(r); inBase[n] {
			shared[n] = true
		}
	}
	return shared
}
