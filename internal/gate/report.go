package gate

import (
	"math"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// Verdict is the gate's reading of one metric of one benchmark.
type Verdict string

// The verdicts. Only Regression and Missing fail the gate; Inconclusive
// makes it inconclusive when nothing fails.
const (
	// Regression: worse in the metric's bad direction, significant after
	// Holm's correction, by at least the minimum effect.
	Regression Verdict = verdict.Regression
	// Improvement: the same, in the good direction.
	Improvement Verdict = verdict.Improvement
	// NoChange: the confidence intervals rule out a regression as large
	// as the minimum effect.
	NoChange Verdict = verdict.NoChange
	// NoRegression: tested, not significant, but the intervals do not
	// rule out a change of the minimum effect: passes, unless the
	// settings require equivalence (require_no_change), where the row is
	// Inconclusive instead.
	NoRegression Verdict = verdict.NoRegression
	// Inconclusive: too few runs, or intervals too wide to tell; the row
	// says how many runs a side would decide.
	Inconclusive Verdict = Verdict(verdict.Inconclusive)
	// NotGated: a metric without a direction (shown, never judged), or
	// one on a single side only.
	NotGated Verdict = verdict.NotGated
	// Missing: a gated metric the baseline has and the new results lack.
	Missing Verdict = verdict.Missing
	// InvalidVerdict: a regression the gate refuses to call one, because
	// a run of the benchmark was INVALID (a throttled or shared GPU).
	InvalidVerdict Verdict = Verdict(verdict.Invalid)
)

// Row compares one metric (unit) of one benchmark.
type Row struct {
	// Name is the benchmark's full name without the "Benchmark" prefix
	// and the -N GOMAXPROCS suffix: Perf/profile=basic/scenario=.../conc=8.
	Name              string
	Profile, Scenario string
	// Unit is the metric as the bench output writes it (ttft-p99-ns).
	Unit string
	// Headline: one of the point's headline metrics (units.Headline),
	// which the gate judges; a row with a direction that is not is
	// reported only (NotGated).
	Headline bool
	// Tail: a tail metric (units.Tails) judged in its profile's tail test,
	// and decided as a row of it.
	Tail bool
	// Direction is the better direction: from the files' Unit lines,
	// else thresholds.yaml's better:, else units.DefaultDirection.
	Direction units.Direction
	// DirectionFrom says which of the three decided it.
	DirectionFrom string
	// Baseline and New are nil when the metric is on one side only.
	Baseline, New *gatemath.Summary
	// DeltaPct is 100·(new median / baseline median − 1); NaN when
	// either side is missing, ±Inf from a zero baseline median.
	DeltaPct float64
	// P is the Mann-Whitney U test's p-value, exactly benchstat's (NaN
	// unless both sides have runs); PHolm the same after the gate's
	// correction: the larger of its profile's combined p after Holm over
	// the profiles and its own after Holm within the profile (NaN for a
	// row the gate does not judge).
	P, PHolm float64
	// Settings are thresholds.yaml's gate settings for this row.
	Settings thresholds.Gate
	Verdict  Verdict
	// Reason says why, in words, with the numbers that decided.
	Reason string
	// RunsNeeded is, for an inconclusive row, the runs a side that would
	// decide it (estimate: docs/gate.md); -1 when more than
	// MaxRunsEstimate or not estimable; 0 for a decided row.
	RunsNeeded int
}

// CheckKind says which absolute limit a Check tests.
type CheckKind string

// The kinds of absolute checks on the new results.
const (
	// SLOCheck: a slo: limit from thresholds.yaml, on the new median.
	SLOCheck CheckKind = "slo"
	// ErrorRateCheck: max_error_rate, on the highest err-% of any run.
	ErrorRateCheck CheckKind = "max_error_rate"
)

// CheckStatus is the outcome of a Check.
type CheckStatus string

// The check outcomes. Fail and Missing fail the gate; Unchecked makes it
// inconclusive.
const (
	CheckPass CheckStatus = CheckStatus(verdict.Pass)
	CheckFail CheckStatus = CheckStatus(verdict.Fail)
	// CheckMissing: the baseline reports the metric, the new run does not.
	CheckMissing CheckStatus = verdict.Missing
	// CheckUnchecked: a limit on a unit no benchmark of the new results
	// reports (a misspelt unit, or a metric the run could not measure).
	CheckUnchecked CheckStatus = verdict.Unchecked
)

// Check is an absolute limit tested on the new results.
type Check struct {
	Kind CheckKind
	// Name is the benchmark ("" for CheckUnchecked, which is about the
	// whole file).
	Name string
	Unit string
	// Limit is the bound as a person reads it: "≤ 2s".
	Limit string
	// Value is what was tested: the new median (SLOCheck) or the highest
	// run (ErrorRateCheck); NaN when absent.
	Value  float64
	Status CheckStatus
	Reason string
}

// Report is the outcome of Compare.
type Report struct {
	// Baseline and New name the inputs.
	Baseline, New string
	// Thresholds names the thresholds file ("" for the built-in defaults).
	Thresholds string
	// Rows are every metric of every benchmark both sides ran, in the
	// order the files list them.
	Rows []Row
	// Checks are the absolute limits tested on the new results.
	Checks []Check
	// Comparisons is the number of rows judged: headline rows with
	// enough runs on both sides.
	Comparisons int
	// Profiles are the profiles' combined tests, one per profile with a
	// judged row (docs/gate.md, "How the evidence is combined").
	Profiles []ProfileTest
	// Tails are the tail tests, one per profile and tail metric with
	// enough runs (tails.go; docs/gate.md, "Tails").
	Tails []ProfileTest
	// Suite is the suite-wide test of the headline rows (start.go), one
	// at most: Profile SuiteProfile, where the runs of a profile share
	// one server start and at least two profiles have headline rows.
	Suite []ProfileTest
	// Points are the points tests, one per profile whose points line up
	// where a side's runs share a server start (points.go): the point its
	// contrast finds worst.
	Points        []ProfileTest
	pointFamilies []*pointFamily
	// MinimumEffects are each judged metric's minimum detectable effect
	// per profile, from the baseline's spread (mde.go).
	MinimumEffects []MDE
	// OnlyBaseline and OnlyNew are benchmarks one side did not run.
	OnlyBaseline, OnlyNew []string
	// Selection is what --filter kept of the inputs; nil without one.
	Selection *input.Selection
	// Warnings are notes on the comparison (forced configuration
	// differences, benchmarks the new results lack, GOMAXPROCS).
	Warnings []string
}

// Outcome is the gate's overall result (verdict.Outcome).
type Outcome = verdict.Outcome

// The outcomes, with their exit codes.
const (
	OutcomePass         = verdict.OutcomePass
	OutcomeFail         = verdict.OutcomeFail
	OutcomeInconclusive = verdict.OutcomeInconclusive
	OutcomeInvalid      = verdict.OutcomeInvalid
)

// Outcome is FAIL when any row is a regression or missing, any profile
// regressed as a whole (Report.Profiles), or any check
// (a limit, or a check that failed a benchmark) fails or is missing; else
// INVALID when a run was INVALID; else INCONCLUSIVE when any row is
// inconclusive, a limit could not be checked, or the new results lack
// benchmarks the baseline has; else PASS.
func (r *Report) Outcome() Outcome {
	undecided, invalid := len(r.OnlyBaseline) > 0, false
	for _, row := range r.Rows {
		switch row.Verdict {
		case Regression, Missing:
			return OutcomeFail
		case Inconclusive:
			undecided = true
		case InvalidVerdict:
			invalid = true
		}
	}
	for _, p := range r.AllTests() {
		if p.Regression {
			return OutcomeFail
		}
		invalid = invalid || p.Invalid != ""
	}
	for _, c := range r.Checks {
		switch c.Status {
		case CheckFail, CheckMissing:
			return OutcomeFail
		case CheckUnchecked:
			undecided = true
		case CheckInvalid:
			invalid = true
		}
	}
	if invalid {
		return OutcomeInvalid
	}
	if undecided {
		return OutcomeInconclusive
	}
	return OutcomePass
}

// Decision is the Pinpoint-style reading of a Report for a gate that adds
// runs until it can decide.
type Decision string

// The decisions.
const (
	// Different: the new side is worse (the gate fails; more runs will
	// not help).
	Different Decision = verdict.Different
	// Same: no regression can remain (improvements are allowed).
	Same Decision = verdict.Same
	// Unknown: more runs are needed (see Report.RunsNeeded).
	Unknown Decision = verdict.Unknown
)

// Decision maps Outcome to DIFFERENT (FAIL), SAME (PASS) or UNKNOWN.
func (r *Report) Decision() Decision {
	switch r.Outcome() {
	case OutcomeFail:
		return Different
	case OutcomePass:
		return Same
	default:
		return Unknown
	}
}

// RunsNeeded is the most runs a side any inconclusive row asks for: what
// an adaptive gate should reach before comparing again. It is -1 when some
// row cannot be decided within MaxRunsEstimate runs, 0 when no row is
// inconclusive.
func (r *Report) RunsNeeded() int {
	need := 0
	for _, row := range r.Rows {
		if row.Verdict != Inconclusive {
			continue
		}
		if row.RunsNeeded < 0 {
			return -1
		}
		need = max(need, row.RunsNeeded)
	}
	return need
}

// Count returns how many rows have verdict v.
func (r *Report) Count(v Verdict) int {
	return countIf(r.Rows, func(row Row) bool { return row.Verdict == v })
}

// CountChecks returns how many checks have status s.
func (r *Report) CountChecks(s CheckStatus) int {
	return countIf(r.Checks, func(c Check) bool { return c.Status == s })
}

// countIf counts the elements of xs for which keep is true.
func countIf[T any](xs []T, keep func(T) bool) int {
	n := 0
	for _, x := range xs {
		if keep(x) {
			n++
		}
	}
	return n
}

func nan() float64 { return math.NaN() }

// Reported reports whether the row has a direction but is not a
// headline metric: shown with benchstat's numbers, not judged.
func (row Row) Reported() bool {
	return !row.Headline && !row.Tail && (row.Direction == units.Lower || row.Direction == units.Higher)
}

// TooFewRuns reports whether the row is inconclusive only because a side
// has fewer than min_samples runs.
func (row *Row) TooFewRuns() bool {
	return row.Verdict == Inconclusive && row.Baseline != nil && row.New != nil &&
		(row.Baseline.N < row.Settings.MinSamples || row.New.N < row.Settings.MinSamples)
}

// BadChange is the row's relative change in its bad direction, for a gated
// row with both sides.
func (row *Row) BadChange() (float64, bool) {
	gated := row.Direction == units.Lower || row.Direction == units.Higher
	if !gated || row.Baseline == nil || row.New == nil || math.IsNaN(row.DeltaPct) {
		return 0, false
	}
	return gatemath.BadChange(row.Direction, row.Baseline.Median, row.New.Median), true
}
