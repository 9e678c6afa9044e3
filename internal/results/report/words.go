package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/results/diagnose"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// What the Markdown and the HTML report say in the same words.

// Glance is the report's first lines: the gate's verdict, each sweep's
// recommended concurrency, the diagnosis and the checks, one line each.
func (r *Report) Glance() []string {
	var out []string
	if g := r.Gate; g != nil {
		out = append(out, fmt.Sprintf("Gate: %s (exit %d)", g.Summary, g.ExitCode))
	}
	for _, sw := range r.Sweeps {
		out = append(out, fmt.Sprintf("%s/%s: %s", sw.Profile, sw.Scenario, sw.KneeLine()))
	}
	out = append(out, "Diagnosis: "+r.Diagnosis.String())
	out = append(out, "Checks: "+r.Checks.String())
	return out
}

// String counts the checks by status: "612 checks: 600 PASS, 12 FAIL",
// then those that do not apply.
func (c ChecksSummary) String() string {
	out := "no checks"
	if c.Total > 0 {
		var parts []string
		for _, s := range c.Statuses() {
			parts = append(parts, fmt.Sprintf("%d %s", c.ByStatus[s], s))
		}
		out = fmt.Sprintf("%d checks: %s", c.Total, strings.Join(parts, ", "))
	}
	if c.NotApplicable > 0 {
		out += fmt.Sprintf("; %d more do not apply here and are not counted (GPU checks of a server on no GPU this machine watches: the simulator, VLLMPERF_GPUS=none, a remote deployment)", c.NotApplicable)
	}
	return out
}

// AdviceNote says when the rule fired on runs of the very profile it
// recommends (its settings then did not prevent it there); "" otherwise.
func AdviceNote(f diagnose.Finding, a diagnose.Advice) string {
	if slices.Contains(f.Profiles(), a.Profile) {
		return fmt.Sprintf("the rule fired on %s's own runs too", a.Profile)
	}
	return ""
}

// FiredOn says where a rule fired: "2 runs on low-latency, speculative".
func FiredOn(f diagnose.Finding) string {
	n := len(f.Hits)
	runs := "runs"
	if n == 1 {
		runs = "run"
	}
	return fmt.Sprintf("%d %s on %s", n, runs, strings.Join(f.Profiles(), ", "))
}

// fmtMS writes milliseconds with about four significant digits; "-" when
// missing.
func fmtMS(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}

// fmtMetric writes a bench unit's value from metrics for a table, by the
// unit's kind: durations in milliseconds (fmtMS), percentages (fmtPct),
// numbers with the unit's digits; "-" when missing.
func fmtMetric(unit string, metrics map[string]float64) string {
	v, ok := metrics[unit]
	if !ok {
		return "-"
	}
	switch units.KindOf(unit) {
	case units.KindNanoseconds:
		return fmtMS(v / 1e6)
	case units.KindPercent:
		return fmtPct(v)
	default:
		return fmtNum(v, units.Digits(unit))
	}
}

// fmtNum writes v with prec decimals; "-" when missing.
func fmtNum(v float64, prec int) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

// fmtPct writes a percentage already in percent; "-" when missing.
func fmtPct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", v)
}

// fmtUnit writes a gate value in its unit's natural form; "-" when nil.
func fmtUnit(unit string, v *float64) string {
	if v == nil {
		return "-"
	}
	return units.FormatValue(unit, *v)
}

// fmtDelta writes a gate row's change: "+12.3%"; "-" when nil.
func fmtDelta(v *float64) string {
	if v == nil {
		return "-"
	}
	return gate.FormatDelta(*v)
}

// fmtP writes a p-value; "-" when nil.
func fmtP(v *float64) string {
	if v == nil {
		return "-"
	}
	return gate.FormatP(*v)
}

// isKnee reports whether concurrency c is the sweep's knee.
func (sw Sweep) isKnee(c int) bool { return sw.Knee != nil && sw.Knee.Knee == c && c > 0 }

// isRecommended reports whether concurrency c is the recommended limit.
func (sw Sweep) isRecommended(c int) bool {
	return sw.Knee != nil && sw.Knee.Recommended == c && c > 0
}

// Marks are the sweep table's notes for concurrency c: "knee",
// "recommended", "saturation".
func (sw Sweep) Marks(c int) []string {
	var m []string
	if sw.isKnee(c) {
		m = append(m, "knee")
	}
	if sw.isRecommended(c) {
		m = append(m, "recommended")
	}
	if sw.Knee != nil && sw.Knee.Saturation == c && c > 0 {
		m = append(m, "saturation")
	}
	return m
}

// runCount writes "1 run", "12 runs".
func runCount(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

// notJudgedNote is "; not judged: ..." for the runs a rule could not read.
func notJudgedNote(c diagnose.Coverage) string {
	if nj := c.NotJudged(); nj != "" {
		return "; not judged: " + nj
	}
	return ""
}

// orNoRun explains an unchecked rule that lacked nothing: no run of its
// kind was in the folder.
func orNoRun(notJudged string) string {
	if notJudged == "" {
		return "no run of the kind it reads (a load run, or a start-up run for cold-start)"
	}
	return notJudged
}
