package result

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/run/vllmfmt"
)

// windowFigures are the figures a window shows beside the whole run's, by
// label: text and JSON take them from this one list.
var windowFigures = []struct {
	label, key string
	get        func(*stats.Summary) float64
}{
	{"Requests", "requests", func(s *stats.Summary) float64 { return float64(s.Requests) }},
	{"Request throughput (req/s)", "request_throughput", func(s *stats.Summary) float64 { return s.RequestThroughput }},
	{"P50 TTFT (ms)", "p50_ttft_ms", func(s *stats.Summary) float64 { return pct(s.TTFT, 50) }},
	{"P99 TTFT (ms)", "p99_ttft_ms", func(s *stats.Summary) float64 { return pct(s.TTFT, 99) }},
	{"P50 TPOT (ms)", "p50_tpot_ms", func(s *stats.Summary) float64 { return pct(s.TPOT, 50) }},
	{"P99 TPOT (ms)", "p99_tpot_ms", func(s *stats.Summary) float64 { return pct(s.TPOT, 99) }},
	{"P99 E2EL (ms)", "p99_e2el_ms", func(s *stats.Summary) float64 { return pct(s.E2EL, 99) }},
}

// jnum is v for JSON: nil when JSON cannot hold it.
func jnum(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// windowFields are the windows as the result JSON's own keys: steady_window
// (its bounds, rule and figures, or why there is none), metrics_window
// (what the benchmark metrics carry) and, for a ramp-up, vLLM's
// ramp_up_strategy, ramp_up_start_rps and ramp_up_end_rps with
// ramp_windows, ramp_slo_exit_rps, ramp_saturation_rps,
// ramp_judged_windows and ramp_slo (the P99 limits, ms; 0: none).
func (r *Result) windowFields(w *Windows) []vllmfmt.Field {
	steady := map[string]any{"none": w.NoSteady}
	if s := w.Steady; s != nil {
		steady = map[string]any{"from_s": s.From.Seconds(), "to_s": s.To.Seconds(), "rule": w.Rule}
		for _, f := range windowFigures {
			steady[f.key] = jnum(f.get(s.Summary))
		}
	}
	out := []vllmfmt.Field{{Key: "steady_window", Value: steady}, {Key: "metrics_window", Value: w.Carried}}
	ramp := r.Point.Load.Ramp
	if ramp == nil {
		return out
	}
	wins := make([]map[string]any, 0, len(w.Ramp))
	for _, x := range w.Ramp {
		m := map[string]any{"from_s": x.From.Seconds(), "to_s": x.To.Seconds(), "offered_rps": jnum(x.Offered), "arrived_rps": jnum(x.Arrived), "achieved_rps": jnum(x.Achieved)}
		for _, f := range windowFigures {
			m[f.key] = jnum(f.get(x.Summary))
		}
		wins = append(wins, m)
	}
	orNil := func(v float64) any {
		if v == 0 {
			return nil
		}
		return v
	}
	return append(out, vllmfmt.Field{Key: "ramp_up_strategy", Value: string(ramp.Strategy)},
		vllmfmt.Field{Key: "ramp_up_start_rps", Value: ramp.StartRPS}, vllmfmt.Field{Key: "ramp_up_end_rps", Value: ramp.EndRPS},
		vllmfmt.Field{Key: "ramp_windows", Value: wins},
		vllmfmt.Field{Key: "ramp_slo_exit_rps", Value: orNil(w.SLOExit)}, vllmfmt.Field{Key: "ramp_saturation_rps", Value: orNil(w.Saturation)},
		vllmfmt.Field{Key: "ramp_judged_windows", Value: w.Judged},
		vllmfmt.Field{Key: "ramp_slo", Value: map[string]any{"ttft_ms": ms(w.SLO.TTFT), "tpot_ms": ms(w.SLO.TPOT)}})
}

// writeWindows writes why the run stopped early on overload, the steady
// window beside the whole run, and a ramp-up's windows.
func (r *Result) writeWindows(out io.Writer, w *Windows) error {
	bw := bufio.NewWriter(out)
	line := func(label, v string) { fmt.Fprintf(bw, "%-40s %s\n", label, v) }
	header := func(title string) {
		pad := max(50-len(title), 0)
		fmt.Fprintln(bw, strings.Repeat("-", pad/2)+title+strings.Repeat("-", pad-pad/2))
	}
	if v := r.Load.Overload; v != nil {
		line("Stopped early:", v.Error())
	}
	header("Steady-state window")
	if s := w.Steady; s != nil {
		line("Window (s into the run):", fmt.Sprintf("%.2f to %.2f", s.From.Seconds(), s.To.Seconds()))
		line("Chosen:", w.Rule)
	} else {
		line("Window:", "none: "+w.NoSteady)
	}
	line("Benchmark metrics carry:", w.Carried)
	if s := w.Steady; s != nil {
		fmt.Fprintf(bw, "%-40s %12s %12s\n", "", "whole run", "steady")
		for _, f := range windowFigures {
			fmt.Fprintf(bw, "%-40s %12s %12s\n", f.label+":", fig(f.get(r.Summary)), fig(f.get(s.Summary)))
		}
	}
	if len(w.Ramp) > 0 {
		r.writeRamp(bw, w, header, line)
	}
	return bw.Flush()
}

// writeRamp writes a ramp-up's windows and where it left the SLO and
// stopped following the offered rate.
func (r *Result) writeRamp(bw *bufio.Writer, w *Windows, header func(string), line func(string, string)) {
	ramp := r.Point.Load.Ramp
	header(fmt.Sprintf("Ramp-up (%s, %g to %g req/s)", ramp.Strategy, ramp.StartRPS, ramp.EndRPS))
	fmt.Fprintf(bw, "%14s %14s %14s %9s %14s %14s\n", "offered req/s", "arrived req/s", "achieved req/s", "requests", "P99 TTFT (ms)", "P99 TPOT (ms)")
	for _, x := range w.Ramp {
		fmt.Fprintf(bw, "%14.2f %14.2f %14.2f %9d %14s %14s\n", x.Offered, x.Arrived, x.Achieved, x.Summary.Requests, fig(pct(x.Summary.TTFT, 99)), fig(pct(x.Summary.TPOT, 99)))
	}
	slo := fmt.Sprintf("P99 TTFT ≤ %v, P99 TPOT ≤ %v", w.SLO.TTFT, w.SLO.TPOT)
	if w.SLOExit > 0 {
		line("SLO ("+slo+") left at:", fmt.Sprintf("%.2f req/s offered", w.SLOExit))
	} else {
		line("SLO ("+slo+"):", fmt.Sprintf("held up to %g req/s", ramp.EndRPS))
	}
	judged := fmt.Sprintf("%d of %d windows judged", w.Judged, len(w.Ramp))
	switch {
	case w.Saturation > 0:
		line("Throughput stopped following at:", fmt.Sprintf("%.2f req/s offered (achieved below %.0f%% of the arrivals from there; %s)", w.Saturation, 100*rampFollow, judged))
	case w.Judged < 2:
		line("Throughput following the offered rate:", fmt.Sprintf("not judged (%s: a saturation needs two besides the first and the last)", judged))
	default:
		line("Throughput followed the offered rate:", fmt.Sprintf("in its judged windows, up to %g req/s (%s)", ramp.EndRPS, judged))
	}
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fig formats a figure, "-" when there is none.
func fig(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
