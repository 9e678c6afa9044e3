package gate

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchproc"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Options tune a comparison beyond thresholds.yaml.
type Options struct {
	// ConfigKeys are the configuration keys both sides must agree on;
	// nil means DefaultConfigKeys, an empty non-nil slice none. The set
	// of profiles is always compared.
	ConfigKeys []string
	// Force compares despite configuration differences, which then
	// become warnings in the Report.
	Force bool
	// ForceFlag names Force in those warnings (the command's flag);
	// "forced" without one.
	ForceFlag string
	// OwnStarts says that the runs of a side do not share one server
	// start per profile (the interleaved upgrade gate: its blocks and
	// pairs sample starts on both sides), so no start allowance
	// (start_spread) applies: no start-aware tests, no suite-wide test.
	OwnStarts bool
	// Interleaved says that the two sides were measured in alternating
	// blocks on one runner (the upgrade and bisect gates), so the runner's
	// drift falls on both and cancels: the runner control is reported but
	// explains no regression (docs/gate.md, "A slower runner").
	Interleaved bool
}

// Compare judges the new results against the baseline: per benchmark and
// metric the medians, their confidence intervals and the Mann-Whitney U
// test (benchmath, the numbers benchstat prints), a direction, Holm's
// correction over all gated tests, and a Verdict; then the absolute
// limits of thresholds.yaml on the new results. A nil set is an empty file
// (thresholds.Empty: the shipped settings, no limits).
//
// The error is about the input, never about the performance: a
// *MismatchError when the sides were measured on different setups (unless
// opts.Force), an error when no benchmark appears on both sides or when
// the files' Unit lines disagree on a direction.
func Compare(base, next *input.Input, set *thresholds.Set, opts Options) (*Report, error) {
	if set == nil {
		set = thresholds.Empty()
	}
	if base != nil && next != nil && len(base.Results) > 0 && len(next.Results) == 0 && len(next.RunChecks) > 0 {
		return allFailed(base, next, set), nil
	}
	if base == nil || next == nil || len(base.Results) == 0 || len(next.Results) == 0 {
		return nil, errors.New("gate: both sides need benchmark results")
	}
	keys := opts.ConfigKeys
	if keys == nil {
		keys = input.DefaultConfigKeys
	}
	g, err := input.NewGrouping()
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	bs, ns := g.Group(base, input.GroupKeys(keys)), g.Group(next, input.GroupKeys(keys))
	rep := &Report{Baseline: base.Name, New: next.Name, Thresholds: set.Source}

	pm, notes := input.ProvenanceDiffs(bs, ns, keys)
	rep.Warnings = append(rep.Warnings, notes...)
	if _, note := input.ProfileSet(bs, ns); note != "" {
		rep.Warnings = append(rep.Warnings, note)
	}
	if mm := append(input.CheckConfig(bs, ns, keys), pm...); len(mm) > 0 {
		cerr := &input.MismatchError{Baseline: base.Name, New: next.Name, Mismatches: mm}
		if !opts.Force {
			return nil, cerr
		}
		for _, m := range mm {
			rep.Warnings = append(rep.Warnings, orWord(opts.ForceFlag, "forced")+": "+m.Describe(base.Name, next.Name))
		}
	}

	shared, err := matchBenchmarks(bs, ns, rep)
	if err != nil {
		return nil, err
	}
	dirs, err := newDirections(base, next, set)
	if err != nil {
		return nil, err
	}
	var tests []test
	for _, k := range shared {
		bb, nb := bs.Benches[k], ns.Benches[k]
		for _, unit := range unionUnits(bb.Units, nb.Units) {
			row, t := buildRow(bb, nb, unit, set, dirs)
			if t != nil {
				t.row = len(rep.Rows)
				tests = append(tests, *t)
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	judge(rep, tests, set, !opts.OwnStarts)
	rep.Checks = checkLimits(bs, ns, set)
	runChecks(rep, next.RunChecks)
	invalidProfiles(rep, next.RunChecks)
	rep.MinimumEffects = minimumEffects(bs, ns, set, !opts.OwnStarts)
	rep.Warnings = append(rep.Warnings, tooNoisy(rep.MinimumEffects)...)
	judgeRunner(rep, base, next, opts.Interleaved)
	return rep, nil
}

// matchBenchmarks returns the benchmarks both sides ran, in the order the
// files list them, and notes in rep those only one side ran and a
// difference in GOMAXPROCS.
func matchBenchmarks(bs, ns *input.Side, rep *Report) ([]benchproc.Key, error) {
	var shared []benchproc.Key
	procs := map[string]bool{}
	for _, k := range bs.Order {
		nb, ok := ns.Benches[k]
		if !ok {
			rep.OnlyBaseline = append(rep.OnlyBaseline, bs.Benches[k].Name)
			continue
		}
		shared = append(shared, k)
		if bp, np := bs.Benches[k].GoMaxProcs, nb.GoMaxProcs; len(bp) == 1 && len(np) == 1 && bp[0] != np[0] {
			procs[fmt.Sprintf("GOMAXPROCS differs: %s in the baseline, %s in the new results (benchmarks are matched without the -N suffix; the client ran with another core count)", orOne(bp[0]), orOne(np[0]))] = true
		}
	}
	for _, k := range ns.Order {
		if _, ok := bs.Benches[k]; !ok {
			rep.OnlyNew = append(rep.OnlyNew, ns.Benches[k].Name)
		}
	}
	if len(shared) == 0 {
		return nil, fmt.Errorf("no benchmark appears in both %s and %s: the baseline has %s, the new results %s; compare results of the same suite",
			rep.Baseline, rep.New, example(bs), example(ns))
	}
	if len(rep.OnlyBaseline) > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d benchmark(s) of the baseline are not in the new results (not compared; the gate cannot pass without them): run them, or re-baseline if they were removed on purpose", len(rep.OnlyBaseline)))
	}
	rep.Warnings = append(rep.Warnings, sortedKeys(procs)...)
	benchproc.SortKeys(shared)
	return shared, nil
}

// judge runs the tests: every row with runs on both sides gets
// benchstat's p; the headline rows with enough runs are judged, their
// evidence combined per profile first (family.go); starts adds the
// start-aware tests (start.go).
func judge(rep *Report, tests []test, set *thresholds.Set, starts bool) {
	var gated []*test
	for i := range tests {
		t := &tests[i]
		row := &rep.Rows[t.row]
		row.P, t.theta = gatemath.UTest(t.base, t.next)
		t.pWorse = gatemath.UTestWorse(row.Direction, t.base, t.next)
		if t.gated {
			gated = append(gated, t)
		}
	}
	rep.Comparisons = len(gated)
	tails := tailFamilies(rep, tests, starts)
	fams := families(rep, gated, tails, starts)
	// Rows short of runs would join their profile's family once they have
	// them: they need enough runs for the exact test to pass the first
	// step of the correction (within the profile, times the profiles).
	short := map[string]int{}
	for i := range rep.Rows {
		if row := &rep.Rows[i]; row.TooFewRuns() && !row.Tail { // a tail row joins its tail test (tails.go)
			short[row.Profile]++
		}
	}
	profiles := len(fams)
	for p := range short {
		if fams.size(p) == 0 {
			profiles++
		}
	}
	for i := range rep.Rows {
		if row := &rep.Rows[i]; row.TooFewRuns() && !row.Tail {
			m := (fams.size(row.Profile) + short[row.Profile]) * profiles
			setTooFewRuns(row, m, gatemath.HolmRuns(row.Settings.Alpha, m))
		}
	}
	for _, f := range fams {
		for _, t := range f.tests {
			row := &rep.Rows[t.row]
			_, slo := set.Scope(row.Profile, row.Scenario).SLO[row.Unit]
			decide(row, len(f.tests), t.theta, slo || row.Unit == units.ErrPct)
		}
	}
	tailProfileTests(rep, tails, func(row *Row) bool {
		_, slo := set.Scope(row.Profile, row.Scenario).SLO[row.Unit]
		return slo
	})
	for _, f := range fams {
		startRows(rep, f.tests)
	}
	for _, tf := range tails {
		startRows(rep, tf.tests)
	}
	oneAlphaRows(rep)
}

// test is a row with runs on both sides: its samples, whether the gate
// judges it (gated, enough runs), and the U test's effect estimate.
type test struct {
	row        int
	base, next *benchmath.Sample
	gated      bool
	theta      float64
	// pWorse is the one-sided U test's p for NEW worse than the baseline
	// in the row's bad direction (its profile's regression test).
	pWorse float64
	// baseRuns and nextRuns are the runs in file order (run i of every
	// point is one run of the suite), for the tail test.
	baseRuns, nextRuns []float64
	// pStart is the row's start-aware p (rowStart; 0 where the runs are
	// judged as independent).
	pStart float64
	// baseStarts and nextStarts are the server starts each side's runs
	// were measured on (ServerStartKey).
	baseStarts, nextStarts int
}

// buildRow compares one unit of one benchmark. It returns the row and,
// when both sides have runs, a test to run; a row is complete unless the
// test is gated.
func buildRow(bb, nb *input.Bench, unit string, set *thresholds.Set, dirs *directions) (Row, *test) {
	row := Row{
		Name: bb.Name, Profile: bb.Profile, Scenario: bb.Scenario, Unit: unit,
		DeltaPct: nan(), P: nan(), PHolm: nan(),
		Settings: set.Gate(bb.Profile, bb.Scenario, unit),
	}
	row.Direction, row.DirectionFrom = dirs.of(bb.Profile, bb.Scenario, unit)

	bv, inBase := bb.Values[unit]
	nv, inNew := nb.Values[unit]
	var bsam, nsam *benchmath.Sample
	if inBase {
		row.Baseline, bsam = gatemath.Summarize(bv, row.Settings.Confidence)
	}
	if inNew {
		row.New, nsam = gatemath.Summarize(nv, row.Settings.Confidence)
	}
	gated := row.Direction == units.Lower || row.Direction == units.Higher
	// Judged: a headline unit, or one the user gave a direction in
	// thresholds.yaml's better: (asking for it to be gated).
	row.Headline = gated && (units.Headline(unit) || row.DirectionFrom == "thresholds")
	switch {
	case !inNew && gated:
		row.Verdict = Missing
		row.Reason = fmt.Sprintf("measured in the baseline (%d runs) but not in the new results: the new run could not measure it", row.Baseline.N)
		return row, nil
	case !inNew:
		row.Verdict = NotGated
		row.Reason = "not in the new results (a metric without a direction: not gated)"
		return row, nil
	case !inBase:
		row.Verdict = NotGated
		row.Reason = "new metric: no baseline to compare with"
		return row, nil
	}
	row.DeltaPct = 100 * gatemath.RelChange(row.Baseline.Median, row.New.Median)
	t := &test{base: bsam, next: nsam, baseRuns: bv, nextRuns: nv, baseStarts: len(bb.Starts), nextStarts: len(nb.Starts)}
	if !gated {
		row.Verdict = NotGated
		row.Reason = "no direction (shown, not gated): give it one with a Unit line or thresholds.yaml's better:"
		return row, t
	}
	if !row.Headline {
		row.Verdict = NotGated
		row.Reason = "reported, not gated: not one of a point's headline metrics (units.Headline; docs/gate.md, \"What is gated\")"
		return row, t
	}
	if min := row.Settings.MinSamples; row.Baseline.N < min || row.New.N < min {
		row.Verdict = Inconclusive
		setTooFewRuns(&row, 0, 0) // judge adds what Holm's correction needs
		return row, t
	}
	t.gated = true
	return row, t
}

// setTooFewRuns sets the runs needed and the reason of a row short of
// runs: min_samples and a finite interval, and (with m > 0) the runs from
// which the exact U test can be significant after Holm's correction over
// m tests (holm runs a side).
func setTooFewRuns(row *Row, m, holm int) {
	g := row.Settings
	row.RunsNeeded = max(g.MinSamples, gatemath.FiniteCIRuns(g.Confidence))
	why := fmt.Sprintf("%d runs in the baseline and %d in the new results; min_samples is %d", row.Baseline.N, row.New.N, g.MinSamples)
	if holm > row.RunsNeeded {
		row.RunsNeeded = holm
		why += fmt.Sprintf(", and a regression can be significant after the correction over about %d tests (its profile's rows times the profiles) from %d runs a side", m, holm)
	}
	if row.RunsNeeded > gatemath.MaxRunsEstimate {
		row.RunsNeeded = -1
		row.Reason = why + "; " + runsAdvice(-1)
		return
	}
	row.Reason = fmt.Sprintf("%s: run at least %d a side (-count %d)", why, row.RunsNeeded, row.RunsNeeded)
}

func orOne(procs string) string {
	if procs == "" {
		return "1"
	}
	return procs
}

func unionUnits(a, b []string) []string {
	out := append([]string(nil), a...)
	for _, u := range b {
		out = addDistinct(out, u)
	}
	return out
}

func example(s *input.Side) string {
	if len(s.Order) == 0 {
		return "nothing"
	}
	name := s.Benches[s.Order[0]].Name
	if len(s.Order) == 1 {
		return name
	}
	return fmt.Sprintf("%s and %d more", name, len(s.Order)-1)
}

// directions resolves each unit's better direction: the files' Unit lines
// first, then thresholds.yaml, then units.DefaultDirection.
type directions struct {
	base, next *input.Input
	set        *thresholds.Set
}

func newDirections(base, next *input.Input, set *thresholds.Set) (*directions, error) {
	d := &directions{base: base, next: next, set: set}
	var conflicts []string
	for _, m := range input.SortedMetadata(base.Units) {
		if m.Key != "better" {
			continue
		}
		bd, _ := base.FileDirection(m.OrigUnit)
		nd, nm := next.FileDirection(m.OrigUnit)
		if nm != nil && nd != bd {
			bf, bl := m.Pos()
			nf, nl := nm.Pos()
			conflicts = append(conflicts, fmt.Sprintf("%s:%d says Unit %s better=%s but %s:%d says better=%s", bf, bl, m.OrigUnit, m.Value, nf, nl, nm.Value))
		}
	}
	if len(conflicts) > 0 {
		return nil, fmt.Errorf("the files disagree on which way is better:\n  %s\nfix the suite's Unit lines or re-baseline", strings.Join(conflicts, "\n  "))
	}
	return d, nil
}

// of returns the direction of unit in a benchmark of profile and scenario
// and what decided it.
func (d *directions) of(profile, scenario, unit string) (units.Direction, string) {
	if dir, m := d.base.FileDirection(unit); m != nil {
		return dir, "Unit line"
	}
	return d.next.Direction(d.set, profile, scenario, unit)
}

// MinRuns is the fewest runs a side with which the gate can decide m
// gated tests under settings g: min_samples, and enough for the exact U
// test's smallest p to pass the first step of Holm's correction.
func MinRuns(g thresholds.Gate, m int) int {
	return max(g.MinSamples, gatemath.HolmRuns(g.Alpha, m))
}

// allFailed is the report on new results whose every benchmark failed a
// check (no result line at all): nothing compared, the checks listed.
func allFailed(base, next *input.Input, set *thresholds.Set) *Report {
	rep := &Report{Baseline: base.Name, New: next.Name, Thresholds: set.Source}
	seen := map[string]bool{}
	for _, r := range base.Results {
		name := input.BenchmarkName(r)
		if !seen[name] {
			seen[name] = true
			rep.OnlyBaseline = append(rep.OnlyBaseline, name)
		}
	}
	rep.Warnings = append(rep.Warnings, "every benchmark of the new results failed a check: nothing could be compared")
	runChecks(rep, next.RunChecks)
	return rep
}

// addDistinct appends v to list unless list holds it.
func addDistinct(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}

// orWord is name, or word where name is empty.
func orWord(name, word string) string {
	if name == "" {
		return word
	}
	return name
}
