package render

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/vllmperf/vllmperf/internal/harness/diagnose"
	"github.com/vllmperf/vllmperf/internal/harness/units"
)

//go:embed report.html.tmpl
var htmlSource string

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":       fmtNum,
	"ms":        fmtMS,
	"pct":       fmtPct,
	"unit":      fmtUnit,
	"delta":     fmtDelta,
	"p":         fmtP,
	"join":      strings.Join,
	"fired":     FiredOn,
	"advice":    func(f diagnose.Finding, a diagnose.Advice) string { return AdviceNote(f, a) },
	"runs":      runCount,
	"notjudged": func(c diagnose.Coverage) string { return notJudgedNote(c) },
	"ornorun":   orNoRun,
}).Parse(htmlSource))

// htmlView is what the template reads.
type htmlView struct {
	R    *Report
	C    *Charts
	Runs []runRow
}

// runRow is a run of the runs table, its figures formatted.
type runRow struct {
	Name, TokS, ReqS, TTFTP50, TTFTP99, TPOTP50, TPOTP99, Err, Checks string
}

// HTML writes the report as one self-contained HTML page: inline SVG
// charts drawn with gonum.org/v1/plot, no script, nothing fetched.
func HTML(w io.Writer, r *Report) error {
	c := r.BuildCharts()
	v := htmlView{R: r, C: c}
	for _, run := range r.Runs {
		m := run.Metrics
		v.Runs = append(v.Runs, runRow{Name: run.Name, TokS: num(m, units.TokPerSec, 1), ReqS: num(m, units.ReqPerSec, 2),
			TTFTP50: ms(m, units.TTFTP50), TTFTP99: ms(m, units.TTFTP99), TPOTP50: ms(m, units.TPOTP50), TPOTP99: ms(m, units.TPOTP99),
			Err: pct(m, units.ErrPct), Checks: checks(run.Checks)})
	}
	if err := htmlTemplate.Execute(w, v); err != nil {
		return fmt.Errorf("report.html: %w", err)
	}
	return nil
}
