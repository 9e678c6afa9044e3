package gate

import (
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/gate/runnerctl"
)

// RunnerCheckKind is the check of the runner control, one per unit.
const RunnerCheckKind CheckKind = "runner"

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
	shifts := runnerctl.Shifts(base, next)
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
	bv, nv := runnerctl.Values(base, nil), runnerctl.Values(next, nil)
	switch {
	case len(bv) == 0 && len(nv) == 0:
		return false
	case len(bv) == 0:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runner could not be compared: the baseline records no runner control (%s; it was recorded before vllmperf measured one), so a slower runner cannot be told from a slower change; re-record the baseline (make baseline) to record it", strings.Join(runnerctl.JudgedUnits, ", ")))
		return false
	case len(nv) == 0:
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runner could not be compared: the new results record no runner control (%s), so a slower runner cannot be told from a slower change", strings.Join(runnerctl.JudgedUnits, ", ")))
		return false
	}
	shared := runnerctl.SharedBenchmarks(base, next)
	bv, nv = runnerctl.Values(base, shared), runnerctl.Values(next, shared)
	if nb, nn := runnerctl.MinLen(bv), runnerctl.MinLen(nv); nb < runnerctl.MinRuns || nn < runnerctl.MinRuns {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runner could not be compared: its control was recorded by %d run(s) in the baseline and %d in the new results of the benchmarks both ran, fewer than %d a side", nb, nn, runnerctl.MinRuns))
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
func interleavedRunner(rep *Report, shifts []runnerctl.Shift) {
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
func runnerCheck(s runnerctl.Shift) Check {
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
