package report

import (
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate/render"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// Each report table is declared once below, as a list of columns; text,
// Markdown and HTML write the same table (markdown.go, html.go, text.go).

// cell is one formatted cell of a table; Class and Code matter only to
// HTML.
type cell struct {
	Text string
	// Lines are several values in one cell: a line each in HTML, joined
	// with ", " elsewhere.
	Lines []string
	Class string
	Code  bool
}

// String is the cell for text and Markdown.
func (c cell) String() string {
	if c.Lines != nil {
		return strings.Join(c.Lines, ", ")
	}
	return c.Text
}

// column is one column of a table over rows of T: its heading and how a
// row fills it.
type column[T any] struct {
	Head string
	Cell func(T) cell
}

// table is a table with its cells formatted.
type table struct {
	Class  string // HTML's table class
	Header []string
	Rows   []tableRow
}

type tableRow struct {
	Class string // HTML's row class
	Cells []cell
}

// makeTable formats items by cols; rowClass (may be nil) gives a row's
// HTML class.
func makeTable[T any](cols []column[T], items []T, rowClass func(T) string) table {
	t := table{}
	for _, c := range cols {
		t.Header = append(t.Header, c.Head)
	}
	for _, it := range items {
		row := tableRow{}
		if rowClass != nil {
			row.Class = rowClass(it)
		}
		for _, c := range cols {
			row.Cells = append(row.Cells, c.Cell(it))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func plainCol[T any](head string, f func(T) string) column[T] {
	return column[T]{head, func(x T) cell { return cell{Text: f(x)} }}
}

func codeCol[T any](head string, f func(T) string) column[T] {
	return column[T]{head, func(x T) cell { return cell{Text: f(x), Code: true} }}
}

func numCol[T any](head string, f func(T) string) column[T] {
	return column[T]{head, func(x T) cell { return cell{Text: f(x), Class: "num"} }}
}

func statusCol[T any](head, class string, f func(T) string) column[T] {
	return column[T]{head, func(x T) cell { s := f(x); return cell{Text: s, Class: "status " + class + "-" + s} }}
}

// metricCol is the column of a bench unit, headed by its label and
// formatted by its kind (fmtMetric).
func metricCol[T any](unit string, metrics func(T) map[string]float64) column[T] {
	return numCol(units.Label(unit), func(x T) string { return fmtMetric(unit, metrics(x)) })
}

// The tables.

var profileColumns = []column[ProfileConfig]{
	plainCol("profile", func(p ProfileConfig) string { return p.Name }),
	plainCol("backend", func(p ProfileConfig) string { return p.Backend }),
	plainCol("gpu", func(p ProfileConfig) string { return p.GPU }),
	plainCol("model", func(p ProfileConfig) string { return p.Model }),
	plainCol("vLLM", func(p ProfileConfig) string { return p.VLLMVersion }),
	plainCol("image", func(p ProfileConfig) string { return p.Image }),
	plainCol("flags", func(p ProfileConfig) string { return p.Flags }),
}

// sweepUnits are the sweep table's metrics, after its concurrency.
var sweepUnits = []string{units.TokPerSec, units.TTFTP50, units.TTFTP99, units.TPOTP50, units.TPOTP99, units.E2ELP99,
	units.RunningPeak, units.WaitingPeak, units.KVPeakPct}

// sweepTable is a sweep's points by concurrency, with the knee's marks.
func sweepTable(sw Sweep) table {
	pointMetrics := func(p SweepPoint) map[string]float64 { return p.Metrics }
	cols := []column[SweepPoint]{numCol("concurrency", func(p SweepPoint) string { return fmt.Sprint(p.Concurrency) })}
	for _, u := range sweepUnits {
		cols = append(cols, metricCol(u, pointMetrics))
	}
	cols = append(cols, column[SweepPoint]{"", func(p SweepPoint) cell {
		return cell{Lines: sw.Marks(p.Concurrency), Class: "marks"}
	}})
	return makeTable(cols, sw.Points, func(p SweepPoint) string {
		if len(sw.Marks(p.Concurrency)) > 0 {
			return "knee"
		}
		return ""
	})
}

// runUnits are the runs table's metrics, after the run's name.
var runUnits = []string{units.TokPerSec, units.ReqPerSec, units.TTFTP50, units.TTFTP99, units.TPOTP50, units.TPOTP99, units.ErrPct}

// runColumns is the runs table: each run's headline figures and checks.
var runColumns = func() []column[results.Run] {
	runMetrics := func(r results.Run) map[string]float64 { return r.Metrics }
	cols := []column[results.Run]{codeCol("run", func(r results.Run) string { return r.Name })}
	for _, u := range runUnits {
		cols = append(cols, metricCol(u, runMetrics))
	}
	return append(cols, plainCol("checks", func(r results.Run) string { return checks(r.Checks) }))
}()

var gateRowColumns = []column[render.JSONRow]{
	codeCol("benchmark", func(r render.JSONRow) string { return r.Name }),
	{"unit", func(r render.JSONRow) cell { return cell{Text: r.Unit, Class: "unit"} }},
	numCol("baseline", func(r render.JSONRow) string { return fmtUnit(r.Unit, r.BaselineMedian) }),
	numCol("new", func(r render.JSONRow) string { return fmtUnit(r.Unit, r.NewMedian) }),
	numCol("change", func(r render.JSONRow) string { return fmtDelta(r.DeltaPct) }),
	numCol("p (Holm)", func(r render.JSONRow) string { return fmtP(r.PHolm) }),
	statusCol("verdict", "verdict", func(r render.JSONRow) string { return string(r.Verdict) }),
	plainCol("reason", func(r render.JSONRow) string { return r.Reason }),
}

var gateCheckColumns = []column[render.JSONCheck]{
	plainCol("limit", func(c render.JSONCheck) string { return string(c.Kind) }),
	codeCol("benchmark", func(c render.JSONCheck) string { return c.Name }),
	plainCol("unit", func(c render.JSONCheck) string { return c.Unit }),
	plainCol("bound", func(c render.JSONCheck) string { return c.Limit }),
	numCol("value", func(c render.JSONCheck) string { return fmtUnit(c.Unit, c.Value) }),
	statusCol("status", "status", func(c render.JSONCheck) string { return string(c.Status) }),
	plainCol("reason", func(c render.JSONCheck) string { return c.Reason }),
}

var failedCheckColumns = []column[FailedCheck]{
	codeCol("run", func(f FailedCheck) string { return f.Run }),
	plainCol("check", func(f FailedCheck) string { return f.Name }),
	statusCol("status", "status", func(f FailedCheck) string { return string(f.Status) }),
	plainCol("detail", func(f FailedCheck) string { return f.Detail }),
}

// checks summarises a run's checks that apply (verdict.Check.Applies):
// "12/12 ok", or the ones that did not pass by name and status.
func checks(rs []verdict.Check) string {
	var bad []string
	n := 0
	for _, c := range rs {
		switch {
		case !c.Applies():
			continue
		case c.Status != verdict.Pass:
			bad = append(bad, c.Name+" "+string(c.Status))
		}
		n++
	}
	if len(bad) == 0 {
		return fmt.Sprintf("%d/%d ok", n, n)
	}
	return strings.Join(bad, ", ")
}
