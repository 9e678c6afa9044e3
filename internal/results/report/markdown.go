package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate/render"
	"github.com/vllmperf/vllmperf/internal/results/diagnose"
)

// Markdown writes the report as GitHub-flavoured Markdown: the same
// sections as the HTML report, with tables where the HTML has charts.
func Markdown(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	m := &md{w: bw}
	m.line("# vllmperf report: %s", r.Name)
	m.line("")
	m.table(makeTable(profileColumns, r.Profiles, nil))
	for _, g := range r.Glance() {
		m.line("- %s", g)
	}
	m.line("")
	m.diagnosis(r.Diagnosis)
	m.sweeps(r.Sweeps)
	m.frontier(r)
	m.capacities(r)
	m.ramps(r)
	if r.Gate != nil {
		m.gate(r.Gate)
	}
	m.checks(r.Checks)
	m.runs(r)
	return bw.Flush()
}

type md struct{ w io.Writer }

func (m *md) line(format string, args ...any) { fmt.Fprintf(m.w, format+"\n", args...) }

// table writes t as a Markdown table.
func (m *md) table(t table) {
	m.line("| %s |", strings.Join(t.Header, " | "))
	sep := make([]string, len(t.Header))
	for i := range sep {
		sep[i] = "---"
	}
	m.line("| %s |", strings.Join(sep, " | "))
	for _, row := range t.Rows {
		cells := make([]string, len(row.Cells))
		for i, c := range row.Cells {
			cells[i] = mdCell(c.String())
		}
		m.line("| %s |", strings.Join(cells, " | "))
	}
	m.line("")
}

// mdCell escapes a table cell: pipes and line breaks would end it.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func (m *md) diagnosis(d *diagnose.Diagnosis) {
	m.line("## Diagnosis")
	m.line("")
	m.line("%s. Each rule comes from the seed article's bottleneck table and fires on measured evidence; the numbers that fired it follow, with the threshold each was held to (docs/report.md).", capitalize(d.String()))
	m.line("")
	for _, f := range d.Findings {
		m.line("### %s (`%s`)", f.Rule.Title, f.Rule.ID)
		m.line("")
		m.line("Fired on %s:", FiredOn(f))
		m.line("")
		for _, h := range f.Hits {
			m.line("- `%s`", h.Run)
			for _, e := range h.Evidence {
				m.line("  - %s", e)
			}
		}
		m.line("")
		if nj := f.NotJudged(); nj != "" {
			m.line("Not judged: %s.", nj)
			m.line("")
		}
		m.line("What to try:")
		m.line("")
		for _, rem := range f.Rule.Remedies {
			m.line("- %s", rem)
		}
		m.line("")
		m.line("Profiles of ours that address it:")
		m.line("")
		for _, a := range f.Rule.Profiles {
			note := AdviceNote(f, a)
			if note != "" {
				note = " (" + note + ")"
			}
			m.line("- **%s**: %s%s", a.Profile, a.Why, note)
		}
		m.line("")
	}
	if len(d.Quiet) > 0 {
		m.line("Checked and quiet:")
		m.line("")
		for _, q := range d.Quiet {
			m.line("- `%s`: %s (judged on %s)%s", q.Rule.ID, q.Rule.Title, runCount(q.Judged), notJudgedNote(q.Coverage))
		}
		m.line("")
	}
	if len(d.Unchecked) > 0 {
		m.line("Not checked, for lack of data:")
		m.line("")
		for _, u := range d.Unchecked {
			m.line("- `%s`: %s: %s", u.Rule.ID, u.Rule.Title, orNoRun(u.NotJudged()))
		}
		m.line("")
	}
}

func (m *md) sweeps(sws []Sweep) {
	m.line("## Throughput and latency against concurrency")
	m.line("")
	if len(sws) == 0 {
		m.line("The folder has no concurrency sweep.")
		m.line("")
		return
	}
	for _, sw := range sws {
		m.line("### %s / %s", sw.Profile, sw.Scenario)
		m.line("")
		m.line("%s.", capitalize(sw.KneeLine()))
		m.line("")
		m.table(sweepTable(sw))
		if sw.Knee != nil && len(sw.Knee.Explanation) > 0 {
			for _, e := range sw.Knee.Explanation {
				m.line("- %s", e)
			}
			m.line("")
		}
	}
}

// frontier is the Pareto chart's frontier as a table.
func (m *md) frontier(r *Report) {
	if len(r.Sweeps) == 0 {
		return
	}
	m.line("The Pareto frontier of the sweeps' points (output tokens/s per GPU against per user; no other point gives more of both):")
	m.line("")
	m.table(r.frontierTable())
}

func (m *md) capacities(r *Report) {
	if len(r.Capacities) == 0 {
		return
	}
	m.line("## Capacity under the SLO")
	m.line("")
	tables := r.capacityTables()
	for i, c := range r.Capacities {
		m.line("### %s / %s", c.Profile, c.Scenario)
		m.line("")
		m.line("%s.", c.Statement)
		m.line("")
		m.table(tables[i])
	}
}

func (m *md) ramps(r *Report) {
	if len(r.Ramps) == 0 {
		return
	}
	m.line("## Ramp-ups")
	m.line("")
	tables := r.rampTables()
	for i, rr := range r.Ramps {
		m.line("### %s / %s", rr.Profile, rr.Scenario)
		m.line("")
		m.line("%s.", rr.Statement())
		m.line("")
		m.table(tables[i])
	}
}

func (m *md) gate(g *render.JSONReport) {
	m.line("## Gate")
	m.line("")
	m.line("**%s** (exit %d): `%s` against the baseline `%s`%s.", g.Summary, g.ExitCode, g.New, g.Baseline, thresholdsNote(g.Thresholds))
	m.line("")
	notable := g.Notable()
	if len(notable) > 0 {
		m.table(makeTable(gateRowColumns, notable, nil))
	}
	m.line("%d of %d rows are NO CHANGE or NOT GATED and are not listed.", len(g.Rows)-len(notable), len(g.Rows))
	m.line("")
	if len(g.Checks) > 0 {
		m.table(makeTable(gateCheckColumns, g.Checks, nil))
	}
	for _, w := range g.Warnings {
		m.line("- warning: %s", w)
	}
	if len(g.Warnings) > 0 {
		m.line("")
	}
}

func thresholdsNote(file string) string {
	if file == "" {
		return " with the built-in thresholds"
	}
	return fmt.Sprintf(" with `%s`", file)
}

func (m *md) checks(c ChecksSummary) {
	m.line("## Checks")
	m.line("")
	m.line("%s.", capitalize(c.String()))
	m.line("")
	if len(c.Failed) == 0 {
		return
	}
	m.table(makeTable(failedCheckColumns, c.Failed, nil))
}

func (m *md) runs(r *Report) {
	m.line("## Runs")
	m.line("")
	m.table(makeTable(runColumns, r.Runs, nil))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
