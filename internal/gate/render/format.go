package render

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/outfile"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
	"golang.org/x/perf/benchmath"
)

// Formats are the ways the report is written.
func (r *Report) Formats() []verdict.Format {
	return []verdict.Format{{Name: "text", Write: r.WriteBrief}, {Name: "full", Write: r.WriteText}, {Name: "summary", Write: r.WriteSummary}, {Name: "markdown", Write: r.WriteMarkdown}, {Name: "json", Write: r.WriteJSON}}
}

// WriteFormat writes the report in format: text (brief), full, summary,
// markdown or json.
func (r *Report) WriteFormat(w io.Writer, format string) error {
	return verdict.WriteAs(w, format, r.Formats())
}

// cells are one row's printed columns.
type cells struct {
	unit, base, next, delta, p, holm, n, verdict, note string
}

func rowCells(row *gate.Row) cells {
	c := cells{
		unit:    row.Unit,
		base:    fmtSummary(row.Unit, row.Baseline),
		next:    fmtSummary(row.Unit, row.New),
		delta:   gate.FormatDelta(row.DeltaPct),
		p:       gate.FormatP(row.P),
		holm:    gate.FormatP(row.PHolm),
		verdict: string(row.Verdict),
	}
	switch {
	case row.Baseline != nil && row.New != nil:
		c.n = fmt.Sprintf("%d+%d", row.Baseline.N, row.New.N)
	case row.Baseline != nil:
		c.n = fmt.Sprintf("%d+0", row.Baseline.N)
	case row.New != nil:
		c.n = fmt.Sprintf("0+%d", row.New.N)
	}
	// Unchanged rows and metrics without a direction need no words.
	gated := row.Direction == units.Lower || row.Direction == units.Higher
	if row.Verdict != gate.NoChange && row.Verdict != gate.NoRegression && (row.Verdict != gate.NotGated || (gated && !row.Reported())) {
		c.note = row.Reason
	}
	return c
}

// WriteText writes the report for a terminal: one block per benchmark,
// then the limits, what was not compared, warnings and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	ew := &verdict.ErrWriter{W: w}
	ew.Printf("vllmperf gate: %s (baseline) vs %s (new), settings from %s\n", r.Baseline, r.New, r.thresholdsName())
	ew.Printf("%s; medians with %s; p from the Mann-Whitney U test (as benchstat)\n", r.testsWords(), ciWords(r))
	if r.Selection != nil {
		ew.Printf("%s\n", r.Selection)
	}
	ew.Printf("\n")

	head := cells{unit: "unit", base: "baseline", next: "new", delta: "Δ", p: "p", holm: "holm", n: "n", verdict: "verdict"}
	all := []cells{head}
	for i := range r.Rows {
		all = append(all, rowCells(&r.Rows[i]))
	}
	width := columnWidths(all)
	name := ""
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Name != name {
			if name != "" {
				ew.Printf("\n")
			}
			name = row.Name
			ew.Printf("%s\n", name)
			ew.Printf("  %s\n", strings.TrimRight(width.line(head), " "))
		}
		ew.Printf("  %s\n", strings.TrimRight(width.line(all[i+1]), " "))
	}

	r.writeTail(ew)
	return ew.Err
}

// writeTail writes the end of the text reports: the limits that did not
// pass, what was not compared, warnings and the verdict with its exit code.
func (r *Report) writeTail(ew *verdict.ErrWriter) {
	if len(r.Profiles)+len(r.Tails)+len(r.Suite) > 0 {
		ew.Printf("\nprofiles (combined tests):\n")
		for _, p := range r.AllTests() {
			ew.Printf("  %s\n", p.Describe())
		}
	}
	writeMDE(ew, r.MinimumEffects)
	if bad := r.problemChecks(); len(bad) > 0 {
		ew.Printf("\nlimits on the new results (%d checked, %d passed):\n", len(r.Checks), r.CountChecks(gate.CheckPass))
		for _, c := range bad {
			ew.Printf("  %-9s %s\n", c.Status, checkLine(c))
		}
	} else if len(r.Checks) > 0 {
		ew.Printf("\nlimits on the new results: all %d passed\n", len(r.Checks))
	}
	if len(r.OnlyBaseline) > 0 {
		ew.Printf("\nin the baseline only (not compared):\n  %s\n", strings.Join(r.OnlyBaseline, "\n  "))
	}
	if len(r.OnlyNew) > 0 {
		ew.Printf("\nin the new results only (no baseline; limits checked):\n  %s\n", strings.Join(r.OnlyNew, "\n  "))
	}
	for _, warn := range r.Warnings {
		ew.Printf("\nwarning: %s\n", warn)
	}
	ew.Printf("\n%s (exit %d)\n", r.Headline(), r.Outcome().ExitCode())
}

// WriteMarkdown writes the report for a pull request or
// $GITHUB_STEP_SUMMARY: the verdict, the rows that need attention, failed
// limits, and counts of the other rows (a step summary stays short:
// --format full and the JSON report have every row).
func (r *Report) WriteMarkdown(w io.Writer) error {
	ew := &verdict.ErrWriter{W: w}
	icon := map[gate.Outcome]string{gate.OutcomePass: "✅", gate.OutcomeFail: "❌", gate.OutcomeInconclusive: "⚠️", gate.OutcomeInvalid: "🚫"}[r.Outcome()]
	ew.Printf("### %s vllmperf gate: %s\n\n", icon, r.Outcome())
	ew.Printf("`%s` (baseline) → `%s` (new): %s. %s; medians with %s; settings from %s.\n\n",
		mdCode(r.Baseline), mdCode(r.New), strings.TrimPrefix(r.Headline(), string(r.Outcome())+": "), r.testsWords(), ciWords(r), mdCode(r.thresholdsName()))
	if r.Selection != nil {
		ew.Printf("%s\n\n", mdCell(r.Selection.String()))
	}

	for _, p := range r.AllTests() {
		if p.Regression {
			ew.Printf("- ❌ %s\n", mdCode(p.Describe()))
		}
	}
	var attention []*gate.Row
	for i := range r.Rows {
		if needsAttention(&r.Rows[i]) {
			attention = append(attention, &r.Rows[i])
		}
	}
	if len(attention) > 0 {
		mdRows(ew, attention[:min(len(attention), briefRows)])
		if n := len(attention) - briefRows; n > 0 {
			ew.Printf("\n… %d more rows that changed, failed or are undecided: `vllmperf gate %s full`\n", n, verdict.FormatFlag)
		}
		ew.Printf("\n")
	}
	if bad := r.problemChecks(); len(bad) > 0 {
		ew.Printf("| status | benchmark | unit | limit | value | why |\n|---|---|---|---|---|---|\n")
		for _, c := range bad {
			ew.Printf("| %s | %s | %s | %s | %s | %s |\n", c.Status, mdCell(c.Name), mdCell(c.Unit), mdCell(c.Limit), mdCell(gate.FormatValue(c.Unit, c.Value)), mdCell(c.Reason))
		}
		ew.Printf("\n")
	}
	if len(r.OnlyBaseline) > 0 {
		ew.Printf("Not in the new results: %s\n\n", mdList(r.OnlyBaseline))
	}
	if len(r.OnlyNew) > 0 {
		ew.Printf("New, without baseline: %s\n\n", mdList(r.OnlyNew))
	}
	for _, warn := range r.Warnings {
		ew.Printf("> **warning**: %s\n\n", mdCell(warn))
	}
	ew.Printf("%s; every row: `vllmperf gate %s full` or the JSON report.\n", mdCell(r.restWords()), verdict.FormatFlag)
	return ew.Err
}

// mdRows writes rows as a markdown table, each with why it got its verdict.
func mdRows(ew *verdict.ErrWriter, rows []*gate.Row) {
	ew.Printf("| benchmark | unit | baseline | new | Δ | p (holm) | verdict | why |\n|---|---|---|---|--:|--:|---|---|\n")
	for _, row := range rows {
		c := rowCells(row)
		ew.Printf("| %s | %s | %s | %s | %s | %s (%s) | %s | %s |\n", mdCell(row.Name), mdCell(c.unit), mdCell(c.base), mdCell(c.next), c.delta, c.p, c.holm, c.verdict, mdCell(row.Reason))
	}
}

func (r *Report) thresholdsName() string {
	if r.Thresholds == "" {
		return "the built-in defaults"
	}
	return r.Thresholds
}

func (r *Report) problemChecks() []gate.Check {
	var out []gate.Check
	for _, c := range r.Checks {
		if c.Status != gate.CheckPass {
			out = append(out, c)
		}
	}
	return out
}

func checkLine(c gate.Check) string {
	where := c.Name
	if where == "" {
		where = "(all benchmarks)"
	}
	if c.Kind == gate.RunCheckKind {
		return fmt.Sprintf("%s check %s: %s", where, c.Unit, c.Reason)
	}
	return fmt.Sprintf("%s %s %s: %s", where, c.Unit, c.Limit, c.Reason)
}

// ciWords describes the intervals' level, which thresholds.yaml may vary.
func ciWords(r *Report) string {
	levels := map[float64]bool{}
	for _, row := range r.Rows {
		levels[row.Settings.Confidence] = true
	}
	if len(levels) == 1 {
		for l := range levels {
			return fmt.Sprintf("%g%% intervals", 100*l)
		}
	}
	return "confidence intervals"
}

// JSONRow is a Row as --format json writes it (gate.json's rows).
type JSONRow struct {
	Name           string       `json:"name"`
	Profile        string       `json:"profile,omitempty"`
	Scenario       string       `json:"scenario,omitempty"`
	Unit           string       `json:"unit"`
	Headline       bool         `json:"headline"`
	Tail           bool         `json:"tail,omitempty"`
	Direction      string       `json:"direction"`
	DirectionFrom  string       `json:"direction_from"`
	BaselineMedian *float64     `json:"baseline_median"`
	BaselineCI     []*float64   `json:"baseline_ci"`
	BaselineN      int          `json:"baseline_n"`
	BaselineValues []float64    `json:"baseline_values"`
	NewMedian      *float64     `json:"new_median"`
	NewCI          []*float64   `json:"new_ci"`
	NewN           int          `json:"new_n"`
	NewValues      []float64    `json:"new_values"`
	DeltaPct       *float64     `json:"delta_pct"`
	P              *float64     `json:"p"`
	PHolm          *float64     `json:"p_holm"`
	Alpha          float64      `json:"alpha"`
	MinEffectPct   float64      `json:"min_effect_pct"`
	MinSamples     int          `json:"min_samples"`
	Confidence     float64      `json:"confidence"`
	Verdict        gate.Verdict `json:"verdict"`
	Reason         string       `json:"reason"`
	RunsNeeded     *int         `json:"runs_needed"`
}

// JSONCheck is a Check as --format json writes it.
type JSONCheck struct {
	Kind   gate.CheckKind   `json:"kind"`
	Name   string           `json:"name"`
	Unit   string           `json:"unit"`
	Limit  string           `json:"limit"`
	Value  *float64         `json:"value"`
	Status gate.CheckStatus `json:"status"`
	Reason string           `json:"reason,omitempty"`
}

// JSONProfile is one profile's combined test in gate.json.
type JSONProfile struct {
	Profile      string   `json:"profile"`
	Metric       string   `json:"metric,omitempty"`
	Point        string   `json:"point,omitempty"`
	Tests        int      `json:"tests"`
	Points       int      `json:"points,omitempty"`
	P            *float64 `json:"p"`
	PHolm        *float64 `json:"p_holm"`
	PWorse       *float64 `json:"p_worse"`
	PWorseHolm   *float64 `json:"p_worse_holm"`
	PGate        *float64 `json:"p_gate"`
	EffectPct    *float64 `json:"effect_pct"`
	MinEffectPct float64  `json:"min_effect_pct"`
	Regression   bool     `json:"regression"`
	Invalid      string   `json:"invalid,omitempty"`
	// The start-aware test (start.go; absent where the runs of a side
	// are judged as independent): its one-sided p, the shift it
	// measured, that shift's sd with nothing changed, and start_spread.
	PStart         *float64 `json:"p_start,omitempty"`
	ShiftPct       *float64 `json:"shift_pct,omitempty"`
	StartSDPct     *float64 `json:"start_sd_pct,omitempty"`
	StartSpreadPct *float64 `json:"start_spread_pct,omitempty"`
	// BaseStarts and NewStarts are the server starts it allowed for on
	// each side.
	BaseStarts int `json:"base_starts,omitempty"`
	NewStarts  int `json:"new_starts,omitempty"`
	// The suite-wide test's weakest leave-one-out test: the profile it
	// left out, its p and the other profiles' mean shift.
	LeftOut          string   `json:"left_out,omitempty"`
	PLeaveOut        *float64 `json:"p_leave_one_out,omitempty"`
	LeaveOutShiftPct *float64 `json:"leave_one_out_shift_pct,omitempty"`
}

// testsWords says what the gate judged: "12 headline tests in 2 profiles,
// combined per profile and Holm-corrected".
func (r *Report) testsWords() string {
	profiles, n := "profiles", len(r.Profiles)
	if n == 1 {
		profiles = "profile"
	}
	return fmt.Sprintf("%d headline tests in %d %s, combined per profile and Holm-corrected%s (%s)",
		r.Comparisons, n, profiles, r.tailWords(), r.notGatedWords())
}

// JSONReport is the report as --format json writes it: gate.json, which
// vllmperf report reads back with this type.
type JSONReport struct {
	Baseline     string        `json:"baseline"`
	New          string        `json:"new"`
	Thresholds   string        `json:"thresholds"`
	Result       gate.Outcome  `json:"result"`
	ExitCode     int           `json:"exit_code"`
	Decision     gate.Decision `json:"decision"`
	Summary      string        `json:"summary"`
	Comparisons  int           `json:"comparisons"`
	Profiles     []JSONProfile `json:"profiles"`
	RunsNeeded   *int          `json:"runs_needed"`
	Rows         []JSONRow     `json:"rows"`
	Checks       []JSONCheck   `json:"checks"`
	OnlyBaseline []string      `json:"only_baseline"`
	OnlyNew      []string      `json:"only_new"`
	Warnings     []string      `json:"warnings"`

	// Tails are the tail tests (tails.go); Suite the suite-wide test
	// (start.go, none or one); MinimumEffects the minimum detectable
	// effects (mde.go).
	Tails          []JSONProfile `json:"tails"`
	Suite          []JSONProfile `json:"suite"`
	Points         []JSONProfile `json:"points_tests,omitempty"`
	MinimumEffects []JSONMDE     `json:"minimum_effects"`
}

// WriteJSON writes the report as one JSON object: the result and exit
// code, one object per row (name, unit, baseline_median, new_median,
// delta_pct, p, p_holm, verdict, the intervals, n, direction, reason,
// runs_needed) and one per check. Values are in the unit's own scale;
// a number that is not finite (an unbounded interval) is null.
func (r *Report) WriteJSON(w io.Writer) error {
	out := JSONReport{
		Baseline: r.Baseline, New: r.New, Thresholds: r.Thresholds, Result: r.Outcome(), ExitCode: r.Outcome().ExitCode(),
		Decision: r.Decision(), Summary: r.Headline(), Comparisons: r.Comparisons,
		Rows: []JSONRow{}, Checks: []JSONCheck{},
		OnlyBaseline: nonNil(r.OnlyBaseline), OnlyNew: nonNil(r.OnlyNew), Warnings: nonNil(r.Warnings),
	}
	if need := r.RunsNeeded(); need != 0 {
		out.RunsNeeded = &need
	}
	out.Profiles, out.Tails, out.Suite = jsonProfiles(r.Profiles), jsonProfiles(r.Tails), jsonProfiles(r.Suite)
	out.Points = jsonProfiles(r.Points)
	out.MinimumEffects = jsonMDEs(r.MinimumEffects)
	for i := range r.Rows {
		row := &r.Rows[i]
		j := JSONRow{
			Name: row.Name, Profile: row.Profile, Scenario: row.Scenario, Unit: row.Unit, Headline: row.Headline, Tail: row.Tail,
			Direction: row.Direction.String(), DirectionFrom: row.DirectionFrom,
			DeltaPct: finite(row.DeltaPct), P: finite(row.P), PHolm: finite(row.PHolm),
			Alpha: row.Settings.Alpha, MinEffectPct: 100 * row.Settings.MinEffect,
			MinSamples: row.Settings.MinSamples, Confidence: row.Settings.Confidence,
			Verdict: row.Verdict, Reason: row.Reason,
		}
		if s := row.Baseline; s != nil {
			j.BaselineMedian, j.BaselineCI, j.BaselineN, j.BaselineValues = finite(s.Median), []*float64{finite(s.Lo), finite(s.Hi)}, s.N, s.Values
		}
		if s := row.New; s != nil {
			j.NewMedian, j.NewCI, j.NewN, j.NewValues = finite(s.Median), []*float64{finite(s.Lo), finite(s.Hi)}, s.N, s.Values
		}
		if row.Verdict == gate.Inconclusive {
			need := row.RunsNeeded
			j.RunsNeeded = &need
		}
		out.Rows = append(out.Rows, j)
	}
	for _, c := range r.Checks {
		out.Checks = append(out.Checks, JSONCheck{Kind: c.Kind, Name: c.Name, Unit: c.Unit, Limit: c.Limit, Value: finite(c.Value), Status: c.Status, Reason: c.Reason})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// value formatting ----------------------------------------------------------

// fmtSummary writes "40.12ms ±3%" (benchstat's ± range), "—" when absent.
func fmtSummary(unit string, s *gatemath.Summary) string {
	if s == nil {
		return "—"
	}
	rng := benchmath.Summary{Center: s.Median, Lo: s.Lo, Hi: s.Hi}.PctRangeString()
	return gate.FormatValue(unit, s.Median) + " ±" + rng
}

// columns ---------------------------------------------------------------------

type widths [8]int

func columnWidths(rows []cells) widths {
	var w widths
	for _, c := range rows {
		for i, s := range c.fixed() {
			w[i] = max(w[i], utf8.RuneCountInString(s))
		}
	}
	return w
}

func (c cells) fixed() [8]string {
	return [8]string{c.unit, c.base, c.next, c.delta, c.p, c.holm, c.n, c.verdict}
}

// line pads each column; numbers are right-aligned.
func (w widths) line(c cells) string {
	var b strings.Builder
	for i, s := range c.fixed() {
		pad := strings.Repeat(" ", w[i]-utf8.RuneCountInString(s))
		if i >= 3 && i <= 6 {
			b.WriteString(pad + s)
		} else {
			b.WriteString(s + pad)
		}
		b.WriteString("  ")
	}
	b.WriteString(c.note)
	return b.String()
}

// markdown ----------------------------------------------------------------------

func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
}

func mdCode(s string) string { return strings.ReplaceAll(s, "`", "'") }

func mdList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "`" + mdCode(n) + "`"
	}
	return strings.Join(quoted, ", ")
}

// Notable returns the rows whose verdict is not NO CHANGE or NOT GATED:
// the ones that need a reader's attention.
func (j *JSONReport) Notable() []JSONRow {
	var out []JSONRow
	for _, r := range j.Rows {
		if r.Verdict != gate.NoChange && r.Verdict != gate.NotGated && r.Verdict != gate.NoRegression {
			out = append(out, r)
		}
	}
	return out
}

// WriteFile writes the report in format to path, by a temporary file
// renamed onto it: a failed write leaves the old file whole.
func (r *Report) WriteFile(path, format string) error {
	if err := outfile.Replace(path, 0o644, func(w io.Writer) error { return r.WriteFormat(w, format) }); err != nil {
		return fmt.Errorf("the %s report: %w", format, err)
	}
	return nil
}

// tailWords counts the tail tests for the report's first line: ", 3
// tail tests (15 rows)", or "".
func (r *Report) tailWords() string {
	n := len(r.Tails)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d tail tests of %d rows by runs, one α over both", n, countIf(r.Rows, func(row gate.Row) bool { return row.Tail }))
}

// jsonProfiles are profile tests as gate.json writes them.
func jsonProfiles(tests []gate.ProfileTest) []JSONProfile {
	out := []JSONProfile{}
	for _, f := range tests {
		j := JSONProfile{Profile: f.Profile, Metric: f.Metric, Point: f.Point, Tests: f.Tests, Points: f.Points, P: finite(f.P), PHolm: finite(f.PHolm),
			PWorse: finite(f.PWorse), PWorseHolm: finite(f.PWorseHolm), PGate: finite(f.PGate), EffectPct: finite(100 * f.Effect),
			MinEffectPct: 100 * f.MinEffect, Regression: f.Regression, Invalid: f.Invalid}
		if f.StartSD > 0 || f.PStart > 0 {
			j.PStart, j.ShiftPct = finite(f.PStart), finite(100*math.Expm1(f.Shift))
			j.StartSDPct, j.StartSpreadPct = finite(100*f.StartSD), finite(100*f.StartSpread)
			j.BaseStarts, j.NewStarts = f.BaseStarts, f.NextStarts
		}
		if f.LeftOut != "" {
			j.LeftOut, j.PLeaveOut, j.LeaveOutShiftPct = f.LeftOut, finite(f.PLeaveOut), finite(100*math.Expm1(f.LeaveOutShift))
		}
		out = append(out, j)
	}
	return out
}

// notGatedWords lists NotGated for the report's first line: "12 rows
// reported only, not gated: ready-ns ×5, prefix-hit-% ×3, …" (every unit
// named; "0 rows reported only" with none).
func (r *Report) notGatedWords() string {
	ng := r.NotGated()
	n := 0
	parts := make([]string, len(ng))
	for i, u := range ng {
		n += u.Rows
		parts[i] = fmt.Sprintf("%s ×%d", u.Unit, u.Rows)
	}
	if n == 0 {
		return "0 rows reported only"
	}
	return fmt.Sprintf("%d rows reported only, not gated: %s", n, strings.Join(parts, ", "))
}

// JSONMDE is an MDE in gate.json.
type JSONMDE struct {
	Profile      string   `json:"profile"`
	Unit         string   `json:"unit"`
	Points       int      `json:"points"`
	SpreadPct    *float64 `json:"spread_pct"`
	Level        float64  `json:"level"`
	Runs         int      `json:"runs"`
	MDEPct       *float64 `json:"mde_pct"`
	RunsFor5Pct  *int     `json:"runs_for_5pct"`
	MinEffectPct float64  `json:"min_effect_pct"`
	TooNoisy     bool     `json:"too_noisy"`
	// StartSpreadPct is the start_spread allowed for (0 where a side's
	// runs do not share a start), StartFloorPct the smallest change the
	// start-aware test sees at any count (MDE.StartFloor).
	StartSpreadPct float64 `json:"start_spread_pct"`
	StartFloorPct  float64 `json:"start_floor_pct"`
	// BaseStarts and NewStarts are the server starts of each side the
	// floor is for (a plan's new run: one).
	BaseStarts int `json:"base_starts"`
	NewStarts  int `json:"new_starts"`
}

func jsonMDEs(ms []gate.MDE) []JSONMDE {
	out := []JSONMDE{}
	for _, m := range ms {
		j := JSONMDE{Profile: m.Profile, Unit: m.Unit, Points: m.Points, SpreadPct: finite(100 * m.Spread), Level: m.Level,
			Runs: m.Runs, MDEPct: finite(100 * m.Effect), MinEffectPct: 100 * m.MinEffect, TooNoisy: m.TooNoisy,
			StartSpreadPct: 100 * m.StartSpread, StartFloorPct: 100 * m.StartFloor(),
			BaseStarts: max(1, m.BaseStarts), NewStarts: max(1, m.NewStarts)}
		if n := m.RunsFor5; n > 0 {
			j.RunsFor5Pct = &n
		}
		out = append(out, j)
	}
	return out
}
