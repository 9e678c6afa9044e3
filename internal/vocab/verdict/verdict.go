// Package verdict declares the words vllmperf's checks and gates judge
// with (PASS, FAIL, INVALID, NOT_AVAILABLE, INCONCLUSIVE; REGRESSION,
// IMPROVEMENT, MISSING, NO CHANGE, NO REGRESSION, NOT GATED, UNCHECKED;
// DIFFERENT, SAME, UNKNOWN), the check line that carries one, a gate command's
// Outcome and its exit code, and the publish path (publish.go: --format,
// the step summary, the exit error). It imports nothing of the project but
// internal/vocab/exitstatus (the exit policy), so that every reader of a verdict
// (check, gate, history, report, upgrade, the results folder) shares one
// spelling without pulling in what produced it.
package verdict

import (
	"fmt"
	"strings"
)

// Status is a check's outcome.
type Status string

// The statuses. Only Pass is a pass: a metric the server does not expose
// is NotAvailable by name (a failure in strict mode, and never a pass); a
// measurement that cannot be trusted (a counter reset, a throttled GPU) is
// Invalid; a check that cannot decide is Inconclusive with the reason.
const (
	Pass         Status = "PASS"
	Fail         Status = "FAIL"
	Invalid      Status = "INVALID"
	NotAvailable Status = "NOT_AVAILABLE"
	Inconclusive Status = "INCONCLUSIVE"
)

// The words of a comparison against a baseline, beside the statuses:
// a gate row's, a history check's, a bisect step's.
const (
	Regression  = "REGRESSION"
	Improvement = "IMPROVEMENT"
	// Missing: a gated metric the baseline has and the new results lack.
	Missing = "MISSING"
	// NoChange: the intervals rule out a change of the minimum effect.
	NoChange = "NO CHANGE"
	// NoRegression: tested, not significant, not ruled out either.
	NoRegression = "NO REGRESSION"
	// NotGated: shown, never judged (no direction, or one side only).
	NotGated = "NOT GATED"
	// Unchecked: a limit on a metric that no result reports.
	Unchecked = "UNCHECKED"
)

// The Pinpoint-style decisions of a gate that adds runs until it can
// decide: the new side is worse, no regression can remain, or more runs
// are needed.
const (
	Different = "DIFFERENT"
	Same      = "SAME"
	Unknown   = "UNKNOWN"
)

// Check is one check's outcome: the check line of a run (package check
// makes them; summary.json stores them).
type Check struct {
	// Name identifies the check ("reconcile/generation_tokens", "kv_peak").
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Detail says what was compared, with the numbers, or why the check
	// could not decide.
	Detail string `json:"detail"`
	// Metric names the server metric that was missing, for NOT_AVAILABLE.
	Metric string `json:"metric,omitempty"`
	// Advisory marks a NOT_AVAILABLE that fails no run, even in strict
	// mode: what it would watch does not exist here (GPU telemetry of a
	// simulator). It is still never a pass.
	Advisory bool `json:"advisory,omitempty"`
}

// Applies reports whether the check applies here: an Advisory
// NOT_AVAILABLE does not (what it would watch does not exist: the GPU of
// a simulator), and reports keep it out of their counts, saying so.
func (r Check) Applies() bool { return !(r.Status == NotAvailable && r.Advisory) }

// Failed reports whether the result must fail a run: anything but PASS,
// except NOT_AVAILABLE when strict is false or the result is Advisory (it
// is then reported, not failed, and still never counted as a pass).
func (r Check) Failed(strict bool) bool {
	switch r.Status {
	case Pass:
		return false
	case NotAvailable:
		return strict && !r.Advisory
	default:
		return true
	}
}

func (r Check) String() string {
	return fmt.Sprintf("%s %s: %s", r.Status, r.Name, r.Detail)
}

// LinePrefix starts every check line (Check.Line).
const LinePrefix = "check: "

// Line is the line a benchmark logs (b.Errorf) for a check that fails it:
// "check: STATUS NAME: DETAIL", the detail on one line. The gate reads it
// back from the `--- FAIL:` blocks of the bench output.
func (r Check) Line() string {
	return fmt.Sprintf("%s%s %s: %s", LinePrefix, r.Status, r.Name, strings.ReplaceAll(r.Detail, "\n", " "))
}
