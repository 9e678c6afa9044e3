// Package report turns a results folder (package results) into what people
// read: a short text table with the knees and the diagnosis (make bench,
// `vllmperf report`), report.md, and report.html with its charts (inline
// SVG drawn with gonum.org/v1/plot). docs/report.md describes them.
package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/results/diagnose"
)

// Text writes one line per run (the last repetition of each name) with its
// headline figures and checks, then each sweep's knee with the numbers
// behind it.
func Text(w io.Writer, s *results.Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	t := makeTable(runColumns, LastRuns(s), nil)
	fmt.Fprintf(tw, "%s\t\n", strings.Join(t.Header, "\t"))
	for _, row := range t.Rows {
		var cells []string
		for _, c := range row.Cells {
			cells = append(cells, c.String())
		}
		fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range LastCapacities(s) {
		fmt.Fprintf(w, "\n%s/%s: %s\n", c.Profile, c.Scenario, c.Statement)
	}
	for _, k := range LastKnees(s) {
		fmt.Fprintf(w, "\n%s/%s: recommended concurrency limit %s (knee %s, saturation %s, SLO %s)\n",
			k.Profile, k.Scenario, orNone(k.Recommended), orNone(k.Knee), orNone(k.Saturation), orNone(k.SLOMax))
		for _, line := range k.Explanation {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	return nil
}

// DiagnosisText writes the diagnosis in short: each rule that fired, the
// profiles it fired on, its first piece of evidence and the profiles of
// ours that address it. report.md and report.html have every number.
func DiagnosisText(w io.Writer, d *diagnose.Diagnosis) error {
	if _, err := fmt.Fprintf(w, "\ndiagnosis: %s\n", d); err != nil {
		return err
	}
	for _, f := range d.Findings {
		var advice []string
		for _, a := range f.Rule.Profiles {
			advice = append(advice, a.Profile)
		}
		h := f.Hits[0]
		if _, err := fmt.Fprintf(w, "  %s: %s; fired on %s\n    e.g. %s: %s\n    profiles: %s\n",
			f.Rule.ID, f.Rule.Title, FiredOn(f), h.Run, h.Evidence[0], strings.Join(advice, ", ")); err != nil {
			return err
		}
	}
	return nil
}

// LastRuns returns the last repetition of each run name, in first-seen
// order.
func LastRuns(s *results.Summary) []results.Run {
	idx := map[string]int{}
	var out []results.Run
	for _, r := range s.Runs {
		if i, ok := idx[r.Name]; ok {
			out[i] = r
			continue
		}
		idx[r.Name] = len(out)
		out = append(out, r)
	}
	return out
}

// LastKnees returns the last knee of each profile and scenario.
func LastKnees(s *results.Summary) []results.Knee {
	return lastBy(s.Knees, func(k results.Knee) string { return k.Profile + "/" + k.Scenario })
}

// lastBy keeps the last of the items that share a key, in the order each
// key first appears.
func lastBy[T any](items []T, key func(T) string) []T {
	idx := map[string]int{}
	var out []T
	for _, it := range items {
		k := key(it)
		if i, ok := idx[k]; ok {
			out[i] = it
			continue
		}
		idx[k] = len(out)
		out = append(out, it)
	}
	return out
}

func orNone(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}
