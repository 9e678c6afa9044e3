package gate

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Headline is the one-line verdict: "FAIL: 2 regressions, 1 limit
// breached".
func (r *Report) Headline() string {
	var parts []string
	add := func(n int, one, many string) {
		switch {
		case n == 1:
			parts = append(parts, "1 "+one)
		case n > 1:
			parts = append(parts, fmt.Sprintf("%d %s", n, many))
		}
	}
	add(r.Count(Regression), "regression", "regressions")
	regressed := r.RegressedProfiles()
	suite := slices.Contains(regressed, SuiteProfile)
	add(len(regressed)-btoi(suite), "profile regressed", "profiles regressed")
	if suite {
		parts = append(parts, "every profile slower together (the suite-wide test)")
	}
	add(r.Count(Missing), "missing metric", "missing metrics")
	add(r.CountChecks(CheckFail)-r.countRunChecks(CheckFail), "limit breached", "limits breached")
	add(r.CountChecks(CheckMissing), "limit without its metric", "limits without their metric")
	add(r.countRunChecks(CheckFail), "failed check", "failed checks")
	add(r.countRunChecks(CheckInvalid)+r.Count(InvalidVerdict), "INVALID run or row", "INVALID runs or rows")
	add(r.Count(Inconclusive), "inconclusive", "inconclusive")
	add(r.CountChecks(CheckUnchecked), "limit never checked", "limits never checked")
	add(len(r.OnlyBaseline), "baseline benchmark not run", "baseline benchmarks not run")
	add(r.Count(Improvement), "improvement", "improvements")
	add(r.Count(NoChange), "unchanged", "unchanged")
	add(r.Count(NoRegression), "without a regression", "without a regression")
	if len(parts) == 0 {
		parts = append(parts, "nothing gated")
	}
	head := fmt.Sprintf("%s: %s", r.Outcome(), strings.Join(parts, ", "))
	if names := r.RegressedTests(); len(names) > 0 {
		head += "; profiles: " + strings.Join(names, ", ")
	}
	if names := r.FailedCheckNames(); len(names) > 0 {
		head += "; checks: " + strings.Join(names, "; ")
	}
	if words := r.runnerWords(); words != "" {
		head += "; " + words
	}
	return head
}

// countRunChecks counts the checks of benchmarks (RunCheckKind) with
// status s.
func (r *Report) countRunChecks(s CheckStatus) int {
	return countIf(r.Checks, func(c Check) bool { return c.Kind == RunCheckKind && c.Status == s })
}

// RegressedProfiles names the profiles that regressed as a whole (by
// their headline test or a tail test), once each.
func (r *Report) RegressedProfiles() []string {
	var out []string
	for _, p := range r.AllTests() {
		if p.Regression {
			out = addDistinct(out, p.Profile)
		}
	}
	return out
}

// FormatValue writes a value in its unit's natural form (thresholds'), "—"
// for none (NaN).
func FormatValue(unit string, v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return units.FormatValue(unit, v)
}

// FormatDelta writes a change in percent as benchstat does (+1.23%), "—"
// for none (NaN).
func FormatDelta(pct float64) string {
	switch {
	case math.IsNaN(pct):
		return "—"
	case math.IsInf(pct, 1):
		return "+∞%"
	case math.IsInf(pct, -1):
		return "-∞%"
	}
	return fmt.Sprintf("%+.2f%%", pct)
}

// fmtPct writes a limit in percent without trailing zeros (5%, 2.5%).
func fmtPct(pct float64) string {
	return strconv.FormatFloat(pct, 'f', -1, 64) + "%"
}

// FormatP writes a p-value with three decimals.
func FormatP(p float64) string {
	if math.IsNaN(p) {
		return "—"
	}
	return fmt.Sprintf("%.3f", p)
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
