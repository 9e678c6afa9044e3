// Package render turns a results folder (package results) into what people
// read: a short text table with the knees and the diagnosis (make bench,
// `vllmperf report`), report.md, and report.html with its charts (inline
// SVG drawn with gonum.org/v1/plot). docs/report.md describes them.
package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/vllmperf/vllmperf/internal/harness/check"
	"github.com/vllmperf/vllmperf/internal/harness/diagnose"
	"github.com/vllmperf/vllmperf/internal/harness/results"
	"github.com/vllmperf/vllmperf/internal/harness/units"
)

// Text writes one line per run (the last repetition of each name) with its
// headline figures and checks, then each sweep's knee with the numbers
// behind it.
func Text(w io.Writer, s *results.Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\ttok/s\treq/s\tTTFT p50\tTTFT p99\tTPOT p50\tTPOT p99\terr\tchecks\t")
	for _, r := range LastRuns(s) {
		m := r.Metrics
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Name,
			num(m, units.TokPerSec, 1), num(m, units.ReqPerSec, 2),
			ms(m, units.TTFTP50), ms(m, units.TTFTP99), ms(m, units.TPOTP50), ms(m, units.TPOTP99),
			pct(m, units.ErrPct), checks(r.Checks))
	}
	if err := tw.Flush(); err != nil {
		return err
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
	idx := map[string]int{}
	var out []results.Knee
	for _, k := range s.Knees {
		key := k.Profile + "/" + k.Scenario
		if i, ok := idx[key]; ok {
			out[i] = k
			continue
		}
		idx[key] = len(out)
		out = append(out, k)
	}
	return out
}

func num(m map[string]float64, unit string, prec int) string {
	v, ok := m[unit]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, v)
}

func ms(m map[string]float64, unit string) string {
	v, ok := m[unit]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1fms", v/1e6)
}

func pct(m map[string]float64, unit string) string {
	v, ok := m[unit]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", v)
}

// checks summarises a run's checks: "12/12 ok", or the ones that did not
// pass by name and status.
func checks(rs []check.Result) string {
	var bad []string
	for _, c := range rs {
		if c.Status != check.Pass {
			bad = append(bad, c.Name+" "+string(c.Status))
		}
	}
	if len(bad) == 0 {
		return fmt.Sprintf("%d/%d ok", len(rs), len(rs))
	}
	return strings.Join(bad, ", ")
}

func orNone(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}
