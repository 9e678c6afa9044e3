package gate

import (
	"fmt"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// RunCheckKind: a check of package check that failed a benchmark of the
// new results (BenchmarkPerf's b.Errorf, written with CheckLine).
const RunCheckKind CheckKind = "check"

// CheckInvalid is a run check that found the measurement itself unsound
// (a counter reset, a throttled or shared GPU): the gate refuses to call
// anything in that benchmark a regression and the outcome is INVALID.
const CheckInvalid = CheckStatus(verdict.Invalid)

// runChecks turns the new side's failed run checks into the report's
// checks (FAIL, or INVALID for an unsound measurement) and refuses a
// regression verdict on a benchmark with an INVALID run.
func runChecks(rep *Report, failed []input.RunCheck) {
	invalid := map[string]string{}
	for _, rc := range failed {
		c := Check{Kind: RunCheckKind, Name: rc.Benchmark, Unit: rc.Name, Value: nan(), Status: CheckFail,
			Reason: rc.Status + ": " + rc.Detail}
		if rc.Status == input.StatusInvalid {
			c.Status = CheckInvalid
			if _, seen := invalid[rc.Benchmark]; !seen {
				invalid[rc.Benchmark] = rc.Name + ": " + rc.Detail
			}
		}
		rep.Checks = append(rep.Checks, c)
	}
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if why, ok := invalid[row.Name]; ok && row.Verdict == Regression {
			row.Verdict = InvalidVerdict
			row.Reason = "not called a regression: a run of this benchmark was INVALID (" + why + "); " + row.Reason
		}
	}
}

// FailedCheckNames lists the failed run checks as "BENCHMARK: NAME"
// (STATUS), once each, in order.
func (r *Report) FailedCheckNames() []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range r.Checks {
		if c.Kind != RunCheckKind {
			continue
		}
		s := fmt.Sprintf("%s: %s (%s)", c.Name, c.Unit, c.Status)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
