package render

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// WriteSummary writes the report for a terminal in brief (make bench): one
// line per benchmark with its verdicts and its largest change for the
// worse, then in full the rows that need attention — regressions, missing
// metrics, improvements, and inconclusive rows with a reason of their own
// (rows short of runs are counted once: the remedy is the same) — then the
// limits, what was not compared, warnings and the verdict.
func (r *Report) WriteSummary(w io.Writer) error {
	ew := &verdict.ErrWriter{W: w}
	ew.Printf("vllmperf gate: %s (baseline) vs %s (new), settings from %s\n", r.Baseline, r.New, r.thresholdsName())
	ew.Printf("%s; medians with %s; p from the Mann-Whitney U test (as benchstat)\n\n", r.testsWords(), ciWords(r))

	lines := [][]string{{"benchmark", "gated", "regression", "missing", "improvement", "no change / no regression", "inconclusive", "worst change"}}
	var attention []*gate.Row
	var short []*gate.Row
	for _, b := range r.benchmarks() {
		var n [5]int // regression, missing, improvement, no change, inconclusive
		var worst *gate.Row
		worstBad := math.Inf(-1)
		for _, row := range b {
			switch row.Verdict {
			case gate.Regression:
				n[0]++
			case gate.Missing:
				n[1]++
			case gate.Improvement:
				n[2]++
			case gate.NoChange, gate.NoRegression:
				n[3]++
			case gate.Inconclusive:
				n[4]++
			}
			switch {
			case row.TooFewRuns():
				short = append(short, row)
			case row.Verdict == gate.Regression || row.Verdict == gate.Missing || row.Verdict == gate.Improvement || row.Verdict == gate.Inconclusive:
				attention = append(attention, row)
			}
			if bad, ok := row.BadChange(); ok && bad > worstBad {
				worst, worstBad = row, bad
			}
		}
		line := []string{b[0].Name, strconv.Itoa(n[0] + n[1] + n[2] + n[3] + n[4])}
		for _, k := range n {
			line = append(line, dotIfZero(k))
		}
		if worst != nil {
			line = append(line, worst.Unit+" "+gate.FormatDelta(worst.DeltaPct))
		} else {
			line = append(line, "—")
		}
		lines = append(lines, line)
	}
	writeColumns(ew, lines)

	if len(attention) > 0 {
		ew.Printf("\nrows that need attention:\n")
		writeRowsByBenchmark(ew, attention)
	}
	if len(short) > 0 {
		need := 0
		for _, row := range short {
			need = max(need, row.RunsNeeded)
		}
		ew.Printf("\n%d rows are INCONCLUSIVE for too few runs (%s): run at least %d a side (-count %d)\n",
			len(short), runCounts(short), need, need)
	}
	r.writeTail(ew)
	return ew.Err
}

// benchmarks groups the rows by benchmark, in order.
func (r *Report) benchmarks() [][]*gate.Row {
	var out [][]*gate.Row
	for i := range r.Rows {
		row := &r.Rows[i]
		if len(out) == 0 || out[len(out)-1][0].Name != row.Name {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], row)
	}
	return out
}

// runCounts describes the rows' run counts: "10 in the baseline, 1 in the
// new results; min_samples 6".
func runCounts(rows []*gate.Row) string {
	seen := map[string]bool{}
	var parts []string
	for _, row := range rows {
		s := fmt.Sprintf("%d in the baseline, %d in the new results; min_samples %d", row.Baseline.N, row.New.N, row.Settings.MinSamples)
		if !seen[s] {
			seen[s] = true
			parts = append(parts, s)
		}
	}
	if len(parts) > 3 {
		parts = append(parts[:3], "…")
	}
	return strings.Join(parts, " / ")
}

func dotIfZero(n int) string {
	if n == 0 {
		return "."
	}
	return strconv.Itoa(n)
}

// writeColumns writes a table padded to its columns, numbers (all but the
// first and last column) right-aligned.
func writeColumns(ew *verdict.ErrWriter, lines [][]string) {
	var width []int
	for _, l := range lines {
		for i, c := range l {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, l := range lines {
		var b strings.Builder
		for i, c := range l {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 && i < len(l)-1 {
				b.WriteString(pad + c)
			} else {
				b.WriteString(c + pad)
			}
			b.WriteString("  ")
		}
		ew.Printf("%s\n", strings.TrimRight(b.String(), " "))
	}
}
