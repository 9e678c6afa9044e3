package report

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot/plotter"

	"github.com/vllmperf/vllmperf/internal/results"
)

// RampRun is a ramp-up run of the folder (docs/load-shapes.md): its rate
// windows and the two rates they found.
type RampRun struct {
	Profile, Scenario, Run string
	*results.Ramp
}

// ramps are the ramp-up runs among runs, in run order; a run whose ramp
// cannot be read is an error naming it.
func ramps(runs []results.Run) ([]RampRun, error) {
	var out []RampRun
	for _, r := range runs {
		ramp, err := r.Ramp()
		if err != nil {
			return nil, err
		}
		if ramp != nil {
			out = append(out, RampRun{Profile: r.Profile, Scenario: r.Scenario, Run: r.Name, Ramp: ramp})
		}
	}
	return out, nil
}

// Statement says where the ramp left the SLO and where its throughput
// stopped following the arrivals, or that it did not.
func (rr RampRun) Statement() string {
	slo := fmt.Sprintf("the P99s stayed within the SLO up to %s req/s", rate(rr.EndRPS))
	if v := rr.SLOExit; v != nil {
		slo = fmt.Sprintf("the P99s left the SLO at %s req/s offered", rate(*v))
	}
	judged := fmt.Sprintf("%d of %d windows judged", rr.Judged, len(rr.Windows))
	var thr string
	switch {
	case rr.Saturation != nil:
		thr = fmt.Sprintf("throughput stopped following the arrivals at %s req/s offered (%s)", rate(*rr.Saturation), judged)
	case rr.Judged < 2:
		thr = fmt.Sprintf("throughput not judged (%s: a saturation needs two)", judged)
	default:
		thr = fmt.Sprintf("throughput followed the arrivals in the judged windows (%s)", judged)
	}
	return fmt.Sprintf("%s ramp from %s to %s req/s: %s; %s", rr.Strategy, rate(rr.StartRPS), rate(rr.EndRPS), slo, thr)
}

// rate writes a request rate with two decimals at most.
func rate(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// optFig writes v with the given decimals, "–" when missing.
func optFig(v *float64, decimals int) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(*v, 'f', decimals, 64)
}

// rampColumns is a ramp's table: one row per rate window.
var rampColumns = []column[results.RampWindow]{
	numCol("offered req/s", func(w results.RampWindow) string { return optFig(w.Offered, 2) }),
	numCol("arrived req/s", func(w results.RampWindow) string { return optFig(w.Arrived, 2) }),
	numCol("achieved req/s", func(w results.RampWindow) string { return optFig(w.Achieved, 2) }),
	numCol("requests", func(w results.RampWindow) string { return strconv.Itoa(w.Requests) }),
	numCol("TTFT p99 (ms)", func(w results.RampWindow) string { return optFig(w.TTFTP99, 1) }),
	numCol("TPOT p99 (ms)", func(w results.RampWindow) string { return optFig(w.TPOTP99, 1) }),
	numCol("from (s)", func(w results.RampWindow) string { return strconv.FormatFloat(w.FromS, 'f', 2, 64) }),
}

// rampTables are the ramps' tables, in the order of Ramps.
func (r *Report) rampTables() []table {
	var out []table
	for _, rr := range r.Ramps {
		out = append(out, makeTable(rampColumns, rr.Windows, nil))
	}
	return out
}

// rampXYs are the windows' points of get against the offered rate.
func rampXYs(ws []results.RampWindow, get func(results.RampWindow) *float64) plotter.XYs {
	var xys plotter.XYs
	for _, w := range ws {
		if y := get(w); w.Offered != nil && y != nil {
			xys = append(xys, plotter.XY{X: *w.Offered, Y: *y})
		}
	}
	return xys
}

// rampMarks draws the two rates the ramp found as vertical lines, each
// labelled with its rate: the second label lower, so that the two stay
// legible where the rates meet.
func rampMarks(b *chartBuilder, rr RampRun) {
	lo, hi := b.yRange()
	for i, m := range []struct {
		at     *float64
		name   string
		legend string
	}{
		{rr.SLOExit, "SLO left", "SLO left"},
		{rr.Saturation, "saturated", "saturation"},
	} {
		if m.at == nil {
			continue
		}
		text := fmt.Sprintf("%s %s/s", m.name, rate(*m.at))
		b.vline(*m.at, "", m.legend, lo, hi)
		b.label(*m.at, b.yAt(lo, hi, 1-0.06*float64(i)), text, 0)
		b.marks = append(b.marks, text)
	}
}

// yAt is the y value at share f of the way from lo to hi, as the axis
// draws it (geometrically on a log axis).
func (b *chartBuilder) yAt(lo, hi, f float64) float64 {
	if b.logY && lo > 0 {
		return lo * math.Pow(hi/lo, f)
	}
	return lo + f*(hi-lo)
}

// rampThroughputChart: per rate window, the offered, arrived and achieved
// request rates against the offered rate, the two rates marked.
func rampThroughputChart(rr RampRun) (Chart, error) {
	b := newChart("ramp-rate-"+slug(rr.Run), "Ramp-up throughput: "+rr.Profile+" / "+rr.Scenario,
		"offered rate (requests/s)", "rate (requests/s)")
	b.width = narrowChartWidth
	ws := rr.Windows
	b.series("offered", 7, rampXYs(ws, func(w results.RampWindow) *float64 { return w.Offered }), look{dashed: true})
	b.series("arrived", 5, rampXYs(ws, func(w results.RampWindow) *float64 { return w.Arrived }), look{marks: true})
	b.series("achieved", 0, rampXYs(ws, func(w results.RampWindow) *float64 { return w.Achieved }), look{marks: true})
	if b.points > 0 {
		rampMarks(b, rr)
	}
	b.caption = "From summary.json: each rate window's offered rate, the rate its requests arrived at and the throughput achieved (completions one median E2EL later); saturation is where achieved stayed under 90% of arrived (docs/load-shapes.md)."
	return b.render()
}

// rampLatencyChart: per rate window, the TTFT and TPOT P99 against the
// offered rate, their SLO limits and the two rates marked.
func rampLatencyChart(rr RampRun) (Chart, error) {
	b := newChart("ramp-latency-"+slug(rr.Run), "Ramp-up P99 latency: "+rr.Profile+" / "+rr.Scenario,
		"offered rate (requests/s)", "P99 latency (ms, log scale)")
	b.width = narrowChartWidth
	b.logY = true
	logAxis(&b.p.Y)
	ws := rr.Windows
	b.series("TTFT p99", 0, rampXYs(ws, func(w results.RampWindow) *float64 { return w.TTFTP99 }), look{marks: true})
	b.series("TPOT p99", 1, rampXYs(ws, func(w results.RampWindow) *float64 { return w.TPOTP99 }), look{marks: true})
	if b.points > 0 {
		xlo, xhi := b.p.X.Min, b.p.X.Max
		if v := rr.SLO.TTFTMs; v > 0 {
			b.hline(v, fmt.Sprintf("TTFT SLO %g ms", v), xlo, xhi)
		}
		if v := rr.SLO.TPOTMs; v > 0 {
			b.hline(v, fmt.Sprintf("TPOT SLO %g ms", v), xlo, xhi)
		}
		rampMarks(b, rr)
	}
	b.caption = "From summary.json: each rate window's client-side P99s (vLLM's definitions); grey dashed lines are the SLO's limits and the rates where the P99s left it and where throughput stopped following."
	return b.render()
}
