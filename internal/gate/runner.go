package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// The runner control (package runnerctl, docs/gate.md "A slower runner"):
// every run of the suite records the time of a fixed CPU workload in the
// client process, which depends on the machine and not on the system
// under test. When it moved between the baseline and the new results by
// more than its noise, the runner itself changed, and a regression no
// larger than the runner's slowdown explains is INVALID, not a
// REGRESSION.
const (
	// RunnerCheckKind is the check of the runner control, one per unit.
	RunnerCheckKind CheckKind = "runner"
	// RunnerNoiseFloor is the smallest move of the control's median the
	// gate calls a move of the runner (3%: a quiet machine's CPU clock and
	// cache state vary by about 1% between sessions).
	RunnerNoiseFloor = 0.03
	// RunnerNoiseSE is how many standard errors of the difference of the
	// two sides' log medians a move must also exceed.
	RunnerNoiseSE = 3.0
	// RunnerBoundZ is the one-sided normal quantile (95%) of the bounds a
	// move of the runner is judged by: a slower runner explains a
	// regression only up to its slowdown's lower bound, and a faster one
	// hides one at least up to its speed-up's lower bound (the control's
	// own uncertainty is never read in the change's favour).
	RunnerBoundZ = 1.645
	// RunnerMinRuns is the fewest runs a side with the control from which
	// the gate compares it: one or two probes' medians cannot say what
	// the runner's noise is.
	RunnerMinRuns = 3
)

// RunnerUnits are the runner control's units the gate judges: the serial
// probes (units.RunnerIdle, taken with the server idle, in place of
// units.RunnerCPU where both sides record it) and the parallel ones.
var RunnerUnits = []string{units.RunnerCPU, units.RunnerParallel}

// runnerRecorded are the runner units a file may record.
var runnerRecorded = []string{units.RunnerCPU, units.RunnerIdle, units.RunnerParallel}

// IsRunnerUnit reports whether unit is one of the runner control's.
func IsRunnerUnit(unit string) bool { return slices.Contains(runnerRecorded, unit) }

// RunnerShift is how the runner control moved between the two sides in
// one unit, over every run of every benchmark of each side.
type RunnerShift struct {
	Unit string
	// Baseline and New are the sides' medians (ns per block of the
	// workload); NBaseline and NNew their runs.
	Baseline, New   float64
	NBaseline, NNew int
	// Change is New/Baseline − 1: 0.2 when the runner took 20% longer.
	Change float64
	// Noise is the smallest change called a move: RunnerNoiseFloor, or
	// RunnerNoiseSE standard errors of the log ratio of the medians when
	// that is more.
	Noise float64
	// SE is the standard error of the log ratio of the medians.
	SE float64
}

// SlowerBy is the runner's slowdown at its lower bound (RunnerBoundZ
// standard errors under the measured one; 0 when not slower): what it
// can explain of a regression.
func (s RunnerShift) SlowerBy() float64 {
	if !s.Slower() {
		return 0
	}
	return max(0, math.Expm1(math.Log1p(s.Change)-RunnerBoundZ*s.SE))
}

// FasterBy is the runner's speed-up at its lower bound, as the share by
// which a change of the new side reads better than it is (0 when not
// faster): a regression up to it can be hidden.
func (s RunnerShift) FasterBy() float64 {
	if !s.Moved() || s.Change >= 0 {
		return 0
	}
	return max(0, -math.Expm1(math.Log1p(s.Change)+RunnerBoundZ*s.SE))
}

// Moved reports whether the runner moved by more than its noise, either
// way.
func (s RunnerShift) Moved() bool { return math.Abs(math.Log1p(s.Change)) > math.Log1p(s.Noise) }

// Slower reports whether the runner moved, slower.
func (s RunnerShift) Slower() bool { return s.Moved() && s.Change > 0 }

// Describe is the shift in words, with its numbers.
func (s RunnerShift) Describe() string {
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

// runnerValues are an input's runner control values by unit, from the
// runs of the benchmarks in only (every benchmark when only is nil).
func runnerValues(in *input.Input, only map[string]bool) map[string][]float64 {
	out := map[string][]float64{}
	for _, r := range in.Results {
		if only != nil && !only[input.BenchmarkName(r)] {
			continue
		}
		for _, v := range r.Values {
			if u, x := input.AsWritten(v); slices.Contains(runnerRecorded, u) && x > 0 && !math.IsInf(x, 0) {
				out[u] = append(out[u], x)
			}
		}
	}
	return out
}

// minLen is the fewest values of any unit in vs.
func minLen(vs map[string][]float64) int {
	n := -1
	for _, v := range vs {
		if n < 0 || len(v) < n {
			n = len(v)
		}
	}
	return max(n, 0)
}

// RunnerShifts compares the runner control of the two sides: one shift
// per unit both record, over the runs of the benchmarks both sides ran.
// The control's level differs from point to point (in baselines/sim.txt
// the short points read slower), so a side that ran only
// some of the other's points would otherwise read as a slower or faster
// runner.
func RunnerShifts(base, next *input.Input) []RunnerShift {
	shared := sharedBenchmarks(base, next)
	bv, nv := runnerValues(base, shared), runnerValues(next, shared)
	judged := RunnerUnits
	if len(bv[units.RunnerIdle]) > 0 && len(nv[units.RunnerIdle]) > 0 {
		judged = []string{units.RunnerIdle, units.RunnerParallel} // the server idle: its own CPU use cannot move it
	}
	var out []RunnerShift
	for _, u := range judged {
		b, n := bv[u], nv[u]
		if len(b) == 0 || len(n) == 0 {
			continue
		}
		mb, sb := gatemath.LogMedianSE(b)
		mn, sn := gatemath.LogMedianSE(n)
		out = append(out, RunnerShift{
			Unit: u, Baseline: math.Exp(mb), New: math.Exp(mn), NBaseline: len(b), NNew: len(n),
			Change: math.Expm1(mn - mb),
			Noise:  max(RunnerNoiseFloor, math.Expm1(RunnerNoiseSE*math.Hypot(sb, sn))),
			SE:     math.Hypot(sb, sn),
		})
	}
	return out
}

// judgeRunner reads the runner control of both sides into rep: a check
// per unit, a warning when the runner moved or could not be compared;
// when it was slower, every regression (row or profile) no larger than
// the slowdown's lower bound (SlowerBy) made INVALID, naming the runner
// with its figure; when it was faster, symmetrically, every pass that a
// regression could hide behind the speed-up's lower bound (FasterBy)
// made INVALID. Files in which neither side records the control
// (another tool's output) are compared as before. When the sides were
// interleaved, drift cancels by design: a control that moved between
// them is reported and explains nothing (interleavedRunner).
func judgeRunner(rep *Report, base, next *input.Input, interleaved bool) {
	if !runnerComparable(rep, base, next) {
		return
	}
	shifts := RunnerShifts(base, next)
	if interleaved {
		interleavedRunner(rep, shifts)
		return
	}
	slow, fast := 0.0, 0.0
	var slower, faster []string
	for _, s := range shifts {
		switch {
		case s.Slower():
			slow = max(slow, s.SlowerBy())
			slower = append(slower, s.Describe())
		case s.Moved():
			fast = max(fast, s.FasterBy())
			faster = append(faster, s.Describe())
		}
	}
	hidden := 0
	if len(faster) > 0 {
		hidden = hiddenRegressions(rep, fast, strings.Join(faster, "; "))
		what := "no pass it could hide: the comparison stands"
		if hidden > 0 {
			what = fmt.Sprintf("%d result(s) that pass are INVALID: a regression of their min_effect could hide behind the faster runner (at least %.1f%% faster at its lower bound); compare on the baseline's runner, or with the interleaved upgrade gate", hidden, 100*fast)
		}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runner was faster than when the baseline was recorded (%s): %s", strings.Join(faster, "; "), what))
	}
	explained := 0
	if len(slower) > 0 {
		explained = explainRegressions(rep, slow, strings.Join(slower, "; "))
		what := "no regression to explain: the comparison stands"
		if explained > 0 {
			what = fmt.Sprintf("%d regression(s) no larger than its slowdown's lower bound (%.1f%%) are INVALID, not REGRESSION: the runner, not the change, may be slower; rerun on a quiet runner (or gate with the interleaved upgrade gate, which cancels drift)", explained, 100*slow)
		}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runner was slower than when the baseline was recorded (%s): %s", strings.Join(slower, "; "), what))
	}
	for _, s := range shifts {
		c := runnerCheck(s)
		switch {
		case (s.Slower() && explained > 0) || (s.Moved() && !s.Slower() && hidden > 0):
			c.Status = CheckInvalid
		case s.Slower(): // passed: say why beside the slowdown
			c.Reason += "; it passes: no regression for it to explain, so the comparison stands"
		}
		rep.Checks = append(rep.Checks, c)
	}
}

// runnerComparable reports whether both sides record the runner control
// with enough runs to compare it, and otherwise notes in rep why not.
func runnerComparable(rep *Report, base, next *input.Input) bool {
	bv, nv := runnerValues(base, nil), runnerValues(next, nil)
	switch {
	case len(bv) == 0 && len(nv) == 0:
		return false
	case len(bv) == 0:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runner could not be compared: the baseline records no runner control (%s; it was recorded before vllmperf measured one), so a slower runner cannot be told from a slower change; re-record the baseline (make baseline) to record it", strings.Join(RunnerUnits, ", ")))
		return false
	case len(nv) == 0:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runner could not be compared: the new results record no runner control (%s), so a slower runner cannot be told from a slower change", strings.Join(RunnerUnits, ", ")))
		return false
	}
	shared := sharedBenchmarks(base, next)
	bv, nv = runnerValues(base, shared), runnerValues(next, shared)
	if nb, nn := minLen(bv), minLen(nv); nb < RunnerMinRuns || nn < RunnerMinRuns {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runner could not be compared: its control was recorded by %d run(s) in the baseline and %d in the new results of the benchmarks both ran, fewer than %d a side", nb, nn, RunnerMinRuns))
		return false
	}
	return true
}

// interleavedRunner reports the control of interleaved sides: its checks
// pass, and a move is a warning, not an excuse. One runner ran both
// sides' blocks in turn, so its drift fell on both; a control that still
// differs between them was moved by the sides themselves (such as a
// server on the client's host taking its cores) or by load that happened
// to fall on one side's blocks, and neither makes the change's own
// difference the runner's.
func interleavedRunner(rep *Report, shifts []RunnerShift) {
	var moved []string
	for _, s := range shifts {
		c := runnerCheck(s)
		if s.Moved() {
			moved = append(moved, s.Describe())
			c.Reason += "; it passes: the interleaved sides share the runner's drift, so it excuses no regression"
		}
		rep.Checks = append(rep.Checks, c)
	}
	if len(moved) > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runner control differed between the interleaved sides (%s): the runner's drift falls on both sides of interleaved blocks, so this is the sides' own load on the client's cores (a server on the same host) or load that fell on one side's blocks; it explains no regression and the comparison stands", strings.Join(moved, "; ")))
	}
}

// runnerCheck is the check of one unit's shift, passed.
func runnerCheck(s RunnerShift) Check {
	return Check{Kind: RunnerCheckKind, Unit: s.Unit, Limit: fmt.Sprintf("within ±%.1f%% (its noise)", 100*s.Noise),
		Value: 100 * s.Change, Status: CheckPass, Reason: s.Describe()}
}

// explainRegressions makes INVALID every regression no larger than slow
// (the runner's slowdown at its lower bound, described by why) and marks
// the larger ones as beyond it; it returns how many it made INVALID.
func explainRegressions(rep *Report, slow float64, why string) int {
	limit := slow
	n := 0
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if row.Verdict != Regression || row.Baseline == nil || row.New == nil {
			continue
		}
		if c := gatemath.BadChange(row.Direction, row.Baseline.Median, row.New.Median); c <= limit {
			row.Verdict = InvalidVerdict
			row.Reason = fmt.Sprintf("not called a regression: %.1f%% worse is within what the slower runner explains (%.1f%%; %s); %s", 100*c, 100*limit, why, row.Reason)
			n++
		} else {
			row.Reason += fmt.Sprintf("; larger than what the slower runner explains (%.1f%%; %s)", 100*limit, why)
		}
	}
	for _, tests := range [][]ProfileTest{rep.Profiles, rep.Tails, rep.Suite, rep.Points} {
		for i := range tests {
			p := &tests[i]
			if p.Regression && p.Effect <= limit {
				p.Regression = false
				p.Explained = fmt.Sprintf("%.1f%% worse is within what the slower runner explains (%.1f%%)", 100*p.Effect, 100*limit)
				n++
			}
		}
	}
	return n
}

// runnerWords names the slower runner for the headline when it made a
// regression INVALID: "slower runner: runner-cpu-ns +35.2% (noise
// ±3.0%)". A runner check's Value is its change in percent.
func (r *Report) runnerWords() string {
	var parts []string
	for _, c := range r.Checks {
		if c.Kind == RunnerCheckKind && c.Status == CheckInvalid {
			parts = append(parts, fmt.Sprintf("%s %+.1f%% (noise %s)", c.Unit, c.Value, strings.TrimSuffix(strings.TrimPrefix(c.Limit, "within "), " (its noise)")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "slower runner: " + strings.Join(parts, ", ")
}

// sharedBenchmarks are the benchmarks (without go test's -N suffix) that
// both sides ran.
func sharedBenchmarks(base, next *input.Input) map[string]bool {
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

// hiddenRegressions is explainRegressions for a faster runner: every
// judged row that passes (NO CHANGE, NO REGRESSION, IMPROVEMENT) whose
// change for the worse plus fast (the speed-up at its lower bound, why
// describing it) reaches its min_effect, and every profile test that
// does not regress though its effect plus fast reaches its minimum
// effect, is INVALID: on the baseline's runner it could have been a
// regression. It returns how many it made INVALID.
func hiddenRegressions(rep *Report, fast float64, why string) int {
	if fast <= 0 {
		return 0
	}
	n := 0
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if !row.Headline && !row.Tail || row.Baseline == nil || row.New == nil {
			continue
		}
		if row.Verdict != NoChange && row.Verdict != NoRegression && row.Verdict != Improvement {
			continue
		}
		if c := gatemath.BadChange(row.Direction, row.Baseline.Median, row.New.Median); c+fast >= row.Settings.MinEffect {
			row.Verdict = InvalidVerdict
			row.Reason = fmt.Sprintf("not called a pass: %+.1f%% for the worse on a runner at least %.1f%% faster could be a regression of its %g%% minimum effect (%s); %s", 100*c, 100*fast, 100*row.Settings.MinEffect, why, row.Reason)
			n++
		}
	}
	for _, tests := range [][]ProfileTest{rep.Profiles, rep.Tails, rep.Suite, rep.Points} {
		for i := range tests {
			p := &tests[i]
			if !p.Regression && p.MinEffect > 0 && p.Effect+fast >= p.MinEffect && p.Invalid == "" {
				p.Invalid = fmt.Sprintf("%+.1f%% for the worse on a runner at least %.1f%% faster could be a regression", 100*p.Effect, 100*fast)
				n++
			}
		}
	}
	return n
}
