package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// Bounds of the brief report (WriteBrief): past them it counts what it
// leaves out and points to --format full.
const (
	briefRows     = 40 // rows that changed, failed or are undecided
	briefChecks   = 15 // limits that did not pass
	briefNames    = 5  // names of benchmarks on one side only
	briefWarnings = 5
)

// needsAttention reports whether the row changed, failed or could not be
// decided: what a reader of the gate must look at.
func needsAttention(row *gate.Row) bool {
	return row.Verdict != gate.NoChange && row.Verdict != gate.NoRegression && row.Verdict != gate.NotGated
}

// WriteBrief writes the report for a person at a terminal (--format text,
// the default): the verdict first, then only what changed, failed or
// could not be decided, then counts of the rest, and the verdict again as
// the last line (a CI log's tail). WriteText (--format full) has every row.
func (r *Report) WriteBrief(w io.Writer) error {
	ew := &verdict.ErrWriter{W: w}
	ew.Printf("%s (exit %d)\n", r.Headline(), r.Outcome().ExitCode())
	ew.Printf("vllmperf gate: %s (baseline) vs %s (new), settings from %s\n", r.Baseline, r.New, r.thresholdsName())
	ew.Printf("%s; medians with %s\n", r.testsWords(), ciWords(r))
	if r.Selection != nil {
		ew.Printf("%s\n", r.Selection)
	}
	r.writeAttention(ew)
	for _, p := range r.AllTests() {
		if p.Regression {
			ew.Printf("\nregressed: %s\n", p.Describe())
		}
	}
	if bad := r.problemChecks(); len(bad) > 0 {
		ew.Printf("\nlimits on the new results that did not pass (%d of %d):\n", len(bad), len(r.Checks))
		for _, c := range bad[:min(len(bad), briefChecks)] {
			ew.Printf("  %-9s %s\n", c.Status, checkLine(c))
		}
		moreLine(ew, len(bad)-briefChecks, "limits")
	}
	namesLine(ew, "in the baseline only (not compared)", r.OnlyBaseline)
	namesLine(ew, "in the new results only (no baseline; limits checked)", r.OnlyNew)
	for _, warn := range r.Warnings[:min(len(r.Warnings), briefWarnings)] {
		ew.Printf("\nwarning: %s\n", warn)
	}
	moreLine(ew, len(r.Warnings)-briefWarnings, "warnings")
	ew.Printf("\n%s\n", r.restWords())
	ew.Printf("every row, the profiles' tests and the detectable effects: %s full; what the words mean: docs/verdict.md\n", verdict.FormatFlag)
	ew.Printf("\n%s (exit %d)\n", r.Headline(), r.Outcome().ExitCode())
	return ew.Err
}

// writeAttention writes the rows that need attention, by benchmark, at
// most briefRows of them.
func (r *Report) writeAttention(ew *verdict.ErrWriter) {
	var rows []*gate.Row
	for i := range r.Rows {
		if needsAttention(&r.Rows[i]) {
			rows = append(rows, &r.Rows[i])
		}
	}
	if len(rows) == 0 {
		return
	}
	ew.Printf("\nchanged, failed or undecided (%d rows):\n", len(rows))
	shown := rows[:min(len(rows), briefRows)]
	writeRowsByBenchmark(ew, shown)
	moreLine(ew, len(rows)-len(shown), "rows")
}

// restWords counts what the brief report does not show: "rows not
// shown: 552 unchanged, 153 without a regression, 1995 not gated (reported
// only); 302 limits passed".
func (r *Report) restWords() string {
	var parts []string
	for _, c := range []struct {
		v     gate.Verdict
		words string
	}{{gate.NoChange, "unchanged"}, {gate.NoRegression, "without a regression"}, {gate.NotGated, "not gated (reported only, or no direction)"}} {
		if n := r.Count(c.v); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, c.words))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, "none")
	}
	s := "rows not shown: " + strings.Join(parts, ", ")
	if n := r.CountChecks(gate.CheckPass); n > 0 {
		s += fmt.Sprintf("; %d limits passed", n)
	}
	return s
}

// namesLine writes a count of names under title and the first few.
func namesLine(ew *verdict.ErrWriter, title string, names []string) {
	if len(names) == 0 {
		return
	}
	ew.Printf("\n%s: %d benchmarks\n  %s\n", title, len(names), strings.Join(names[:min(len(names), briefNames)], "\n  "))
	moreLine(ew, len(names)-briefNames, "benchmarks")
}

// moreLine says how many of what were left out, when any were.
func moreLine(ew *verdict.ErrWriter, n int, what string) {
	if n > 0 {
		ew.Printf("  … %d more %s: %s full\n", n, what, verdict.FormatFlag)
	}
}

// writeRowsByBenchmark prints rows under their benchmark's name, each
// benchmark with the columns' header, the columns as wide as their
// widest cell.
func writeRowsByBenchmark(ew *verdict.ErrWriter, rows []*gate.Row) {
	head := cells{unit: "unit", base: "baseline", next: "new", delta: "Δ", p: "p", holm: "holm", n: "n", verdict: "verdict"}
	all := []cells{head}
	for _, row := range rows {
		all = append(all, rowCells(row))
	}
	width := columnWidths(all)
	name := ""
	for i, row := range rows {
		if row.Name != name {
			name = row.Name
			ew.Printf("%s\n  %s\n", name, strings.TrimRight(width.line(head), " "))
		}
		ew.Printf("  %s\n", strings.TrimRight(width.line(all[i+1]), " "))
	}
}
