package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/vllmperf/vllmperf/internal/results/diagnose"
)

//go:embed report.html.tmpl
var htmlSource string

//go:embed common.html.tmpl
var commonSource string

var htmlTemplate = template.Must(template.Must(template.New("report").Funcs(template.FuncMap{
	"join":      strings.Join,
	"fired":     FiredOn,
	"advice":    func(f diagnose.Finding, a diagnose.Advice) string { return AdviceNote(f, a) },
	"runs":      runCount,
	"notjudged": func(c diagnose.Coverage) string { return notJudgedNote(c) },
	"ornorun":   orNoRun,
}).Funcs(historyFuncs).Parse(htmlSource)).Parse(commonSource))

// htmlView is what the template reads: the report, its charts and its
// tables (table.go).
type htmlView struct {
	R                                 *Report
	C                                 *Charts
	Profiles, Runs, Failed            table
	Sweeps, Capacities, Ramps         []table
	GateNotable, GateRows, GateChecks *table
}

// HTML writes the report as one self-contained HTML page: inline SVG
// charts drawn with gonum.org/v1/plot, no script, nothing fetched.
func HTML(w io.Writer, r *Report) error {
	v := htmlView{R: r, C: r.BuildCharts(),
		Profiles: makeTable(profileColumns, r.Profiles, nil),
		Runs:     makeTable(runColumns, r.Runs, nil),
		Failed:   makeTable(failedCheckColumns, r.Checks.Failed, nil),
	}
	v.Profiles.Class = "config"
	v.Capacities = r.capacityTables()
	v.Ramps = r.rampTables()
	for _, sw := range r.Sweeps {
		v.Sweeps = append(v.Sweeps, sweepTable(sw))
	}
	if g := r.Gate; g != nil {
		if notable := g.Notable(); len(notable) > 0 {
			t := makeTable(gateRowColumns, notable, nil)
			v.GateNotable = &t
		}
		rows, checks := makeTable(gateRowColumns, g.Rows, nil), makeTable(gateCheckColumns, g.Checks, nil)
		v.GateRows, v.GateChecks = &rows, &checks
	}
	if err := htmlTemplate.Execute(w, v); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	return nil
}
