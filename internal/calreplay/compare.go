package calreplay

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// The tolerances a row must meet (issue 13): TTFT within 25 %, TPOT (or ITL)
// output throughput and batch latency within 15 %.
const (
	TTFTTolerance = 0.25
	RateTolerance = 0.15
)

// Metric names a compared figure.
type Metric string

// The compared metrics, in table order.
const (
	MetricTTFT Metric = "TTFT"
	// MetricTPOT is TPOT, or ITL where the source publishes no TPOT (the
	// replay forces every output length, so the two measure the same pace).
	MetricTPOT Metric = "TPOT"
	// MetricE2EL is compared only for rows that publish no TTFT, TPOT or ITL
	// (the offline latency benchmark's batch latency).
	MetricE2EL Metric = "E2EL"
)

// MetricThroughput is output tokens/s (the bench unit), or input +
// output tokens/s where only that is published (Stat "total").
var MetricThroughput = Metric(units.TokPerSec)

// Metrics are the compared metrics in table order.
var Metrics = []Metric{MetricTTFT, MetricTPOT, MetricThroughput, MetricE2EL}

// Comparison is one published figure beside the simulated one.
type Comparison struct {
	Metric Metric
	// Stat says which statistic: "mean", "median"; for MetricTPOT "ITL
	// mean"/"ITL median" where ITL stands in for TPOT.
	Stat                 string
	Published, Simulated float64 // ms, or tok/s
	Tolerance            float64
}

// Error is (simulated − published) ÷ published.
func (c Comparison) Error() float64 { return (c.Simulated - c.Published) / c.Published }

// Within reports whether the error is within the tolerance.
func (c Comparison) Within() bool { return math.Abs(c.Error()) <= c.Tolerance }

// Compare sets the published figures of res's row beside the replay's.
func Compare(res Result) []Comparison {
	m := res.Row.Measured
	var out []Comparison
	add := func(metric Metric, stat string, pub, sim time.Duration, tol float64) {
		out = append(out, Comparison{Metric: metric, Stat: stat, Published: ms(pub), Simulated: ms(sim), Tolerance: tol})
	}
	latency := func(metric Metric, prefix string, pub calibration.Latency, sim Stats, tol float64) bool {
		switch {
		case pub.Mean > 0:
			add(metric, prefix+"mean", pub.Mean, sim.Mean, tol)
		case pub.Median > 0:
			add(metric, prefix+"median", pub.Median, sim.Median, tol)
		default:
			return false
		}
		return true
	}
	ttft := latency(MetricTTFT, "", m.TTFT, res.TTFT, TTFTTolerance)
	tpot := latency(MetricTPOT, "", m.TPOT, res.TPOT, RateTolerance) ||
		latency(MetricTPOT, "ITL ", m.ITL, res.ITL, RateTolerance)
	switch {
	case m.OutputThroughput > 0:
		out = append(out, Comparison{Metric: MetricThroughput, Stat: "output", Published: m.OutputThroughput, Simulated: res.OutputThroughput, Tolerance: RateTolerance})
	case m.TotalThroughput > 0:
		out = append(out, Comparison{Metric: MetricThroughput, Stat: "total", Published: m.TotalThroughput, Simulated: res.TotalThroughput, Tolerance: RateTolerance})
	}
	if !ttft && !tpot {
		latency(MetricE2EL, "", m.E2EL, res.E2EL, RateTolerance)
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Line is one line of the calibration table: a replayed row and its
// comparisons, or the error that stopped its replay.
type Line struct {
	Result      Result
	Comparisons []Comparison
	Err         error
	// Note explains a miss: the mechanism the simulator lacks, with numbers.
	Note string
	// LOSO are a fit row's comparisons replayed with the costs of the fold
	// that held its source out (cross-validation); nil for check rows.
	LOSO    []Comparison
	LOSOErr error
}

// Within reports whether every comparison of the row is within tolerance.
func (r Line) Within() bool {
	if r.Err != nil {
		return false
	}
	for _, c := range r.Comparisons {
		if !c.Within() {
			return false
		}
	}
	return true
}

// Worst is the comparison with the largest error relative to its
// tolerance (zero Comparison when there is none).
func (r Line) Worst() Comparison {
	var w Comparison
	for _, c := range r.Comparisons {
		if w.Tolerance == 0 || math.Abs(c.Error())/c.Tolerance > math.Abs(w.Error())/w.Tolerance {
			w = c
		}
	}
	return w
}

// Run replays every runnable row (fit rows first, then check rows, each
// in data order) with opts, and each fit row also with the costs of its
// leave-one-source-out fold in loso (nil: not); notes gives the
// explanation of a miss by row id.
func Run(rows []calibration.Row, opts Options, notes map[string]string, loso *LOSO) []Line {
	var out []Line
	for _, split := range []calibration.Split{calibration.Fit, calibration.Check} {
		for _, rp := range Replayable(rows) {
			r := rp.Row
			if r.Split != split {
				continue
			}
			res, err := Replay(r, opts)
			res.LengthsFrom = rp.LengthsFrom
			row := Line{Result: res, Err: err, Note: notes[r.ID]}
			if err == nil {
				row.Comparisons = Compare(res)
			}
			if loso != nil && split == calibration.Fit {
				row.LOSO, row.LOSOErr = looReplay(r, opts, *loso)
			}
			out = append(out, row)
		}
	}
	return out
}

// looReplay replays a fit row with the costs of the fold that held its
// source out.
func looReplay(r calibration.Row, opts Options, l LOSO) ([]Comparison, error) {
	f, ok := l.Fold(r.Source.ID)
	if !ok {
		return nil, fmt.Errorf("loso.yaml has no fold without source %s: run make fit", r.Source.ID)
	}
	c, err := f.CostsOf(presets.FittedCosts)
	if err != nil {
		return nil, err
	}
	opts.Costs = &c
	res, err := Replay(r, opts)
	if err != nil {
		return nil, err
	}
	return Compare(res), nil
}

// Table renders rows as a Markdown table: per row its set, preset, load,
// and for each metric "published → simulated (error)", a miss marked ✗.
func Table(rows []Line) string {
	var b strings.Builder
	b.WriteString("| row | set | preset | load | TTFT ms | TPOT ms | tok/s (output) | batch E2EL ms | left-one-source-out error | engine batch (mean / peak) | TTFT: front end / queue / prefill ms | within |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		res := r.Result
		cells := map[Metric]string{}
		for _, c := range r.Comparisons {
			mark := ""
			if !c.Within() {
				mark = " ✗"
			}
			stat := ""
			if c.Stat != "mean" && c.Stat != "output" {
				stat = c.Stat + " "
			}
			cells[c.Metric] = fmt.Sprintf("%s%s → %s (%+.0f%%)%s", stat, num(c.Published), num(c.Simulated), 100*c.Error(), mark)
		}
		within := "yes"
		if !r.Within() {
			within = "**no**"
		}
		if r.Err != nil {
			within = "error: " + r.Err.Error()
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |", res.Row.ID, res.Row.Split, preset(res.Row), load(res))
		for _, m := range Metrics {
			fmt.Fprintf(&b, " %s |", orDash(cells[m]))
		}
		fmt.Fprintf(&b, " %s |", looCell(r))
		fmt.Fprintf(&b, " %.1f / %d | %.0f / %.0f / %.0f | %s |\n", res.Engine.MeanRunning, res.Engine.Running,
			ms(res.FrontendMean), ms(res.QueueMean), ms(res.PrefillMean), within)
	}
	return b.String()
}

// Summary counts the rows within tolerance per split and names the worst
// comparison of each split.
func Summary(rows []Line) string {
	var b strings.Builder
	for _, split := range []calibration.Split{calibration.Fit, calibration.Check} {
		n, ok := 0, 0
		var worst Line
		var worstC Comparison
		for _, r := range rows {
			if r.Result.Row.Split != split {
				continue
			}
			n++
			if r.Within() {
				ok++
			}
			if w := r.Worst(); w.Tolerance > 0 && (worstC.Tolerance == 0 || math.Abs(w.Error())/w.Tolerance > math.Abs(worstC.Error())/worstC.Tolerance) {
				worst, worstC = r, w
			}
		}
		fmt.Fprintf(&b, "%s set: %d of %d rows within tolerance", split, ok, n)
		if worstC.Tolerance > 0 {
			fmt.Fprintf(&b, "; worst: %s %s %+.0f%% (%s)", worst.Result.Row.ID, worstC.Metric, 100*worstC.Error(), worstC.Stat)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func preset(r calibration.Row) string {
	g := r.Hardware.GPU
	if r.Hardware.Count > 1 {
		g = fmt.Sprintf("%d× %s", r.Hardware.Count, g)
	}
	return g + " " + r.Model.Preset[strings.LastIndex(r.Model.Preset, "/")+1:]
}

// load describes the replayed workload: lengths, arrivals, prompts.
func load(res Result) string {
	w := res.Inputs.Workload
	s := fmt.Sprintf("%d→%d, ", w.InputTokens, w.OutputTokens)
	switch {
	case w.Endpoint == calibration.EndpointOffline:
		s += fmt.Sprintf("offline batch %d", w.Concurrency)
	case w.Concurrency > 0 && math.IsInf(w.RequestRate, 1):
		s += fmt.Sprintf("conc %d", w.Concurrency)
	case math.IsInf(w.RequestRate, 1):
		s += "rate inf"
	default:
		s += fmt.Sprintf("%g req/s", w.RequestRate)
		if w.Concurrency > 0 {
			s += fmt.Sprintf(" cap %d", w.Concurrency)
		}
	}
	s += fmt.Sprintf(", %d prompts", res.NumPrompts)
	if res.PromptsDefaulted {
		s += "†"
	}
	if res.LengthsFrom != "" {
		s += "‡"
	}
	return s
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

// SpreadTable sets the published P99 ÷ median of TTFT and TPOT (ITL where
// no TPOT is published) beside the replay's, for the rows that publish both.
func SpreadTable(lines []Line) string {
	var b strings.Builder
	b.WriteString("| row | set | TTFT P99/median: published → simulated | TPOT (or ITL) P99/median: published → simulated |\n|---|---|---|---|\n")
	ratio := func(pub calibration.Latency, sim Stats) string {
		if pub.P99 == 0 || pub.Median == 0 || sim.Median == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f → %.2f", float64(pub.P99)/float64(pub.Median), float64(sim.P99)/float64(sim.Median))
	}
	for _, l := range lines {
		m, res := l.Result.Row.Measured, l.Result
		ttft := ratio(m.TTFT, res.TTFT)
		pace := ratio(m.TPOT, res.TPOT)
		if !m.TPOT.Published() {
			if pace = ratio(m.ITL, res.ITL); pace != "–" {
				pace = "ITL " + pace
			}
		}
		if ttft == "–" && pace == "–" {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", res.Row.ID, res.Row.Split, ttft, pace)
	}
	return b.String()
}

// looCell is a fit row's leave-one-source-out errors, metric by metric.
func looCell(l Line) string {
	switch {
	case l.LOSOErr != nil:
		return "error: " + l.LOSOErr.Error()
	case l.LOSO == nil:
		return "–"
	}
	var parts []string
	for _, c := range l.LOSO {
		mark := ""
		if !c.Within() {
			mark = " ✗"
		}
		parts = append(parts, fmt.Sprintf("%s %+.0f%%%s", c.Metric, 100*c.Error(), mark))
	}
	return strings.Join(parts, ", ")
}

// errorStats are the absolute errors of one metric over a set of rows.
type errorStats struct {
	n             int
	median, worst float64 // |error|
	worstFactor   float64 // max(simulated ÷ published, published ÷ simulated)
}

func statsOfErrors(cs []Comparison) errorStats {
	var abs []float64
	s := errorStats{n: len(cs), worstFactor: 1}
	for _, c := range cs {
		e := math.Abs(c.Error())
		abs = append(abs, e)
		s.worst = math.Max(s.worst, e)
		if c.Simulated > 0 && c.Published > 0 {
			s.worstFactor = math.Max(s.worstFactor, math.Max(c.Simulated/c.Published, c.Published/c.Simulated))
		} else {
			s.worstFactor = math.Inf(1)
		}
	}
	if len(abs) > 0 {
		slices.Sort(abs)
		if n := len(abs); n%2 == 1 {
			s.median = abs[n/2]
		} else {
			s.median = (abs[n/2-1] + abs[n/2]) / 2
		}
	}
	return s
}

// ErrorSummary is the table of median and worst absolute errors per metric:
// the fit rows in sample (the shipped presets, fitted on them) and left
// one source out (each row predicted by a fit without its source), and the
// check rows (the shipped presets; never fitted on).
func ErrorSummary(lines []Line) string {
	var b strings.Builder
	b.WriteString("| metric | fit rows, in sample: median / worst abs. error | fit rows, left one source out: median / worst abs. error, worst factor | check rows (shipped presets): median / worst abs. error |\n|---|---|---|---|\n")
	for _, m := range Metrics {
		var in, loo, chk []Comparison
		for _, l := range lines {
			pick := func(cs []Comparison) []Comparison {
				var out []Comparison
				for _, c := range cs {
					if c.Metric == m {
						out = append(out, c)
					}
				}
				return out
			}
			if l.Result.Row.Split == calibration.Fit {
				in = append(in, pick(l.Comparisons)...)
				loo = append(loo, pick(l.LOSO)...)
			} else {
				chk = append(chk, pick(l.Comparisons)...)
			}
		}
		cell := func(s errorStats, factor bool) string {
			if s.n == 0 {
				return "–"
			}
			out := fmt.Sprintf("%.0f%% / %.0f%% (%d rows)", 100*s.median, 100*s.worst, s.n)
			if factor {
				out = fmt.Sprintf("%.0f%% / %.0f%%, %.2f× (%d rows)", 100*s.median, 100*s.worst, s.worstFactor, s.n)
			}
			return out
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", m, cell(statsOfErrors(in), false), cell(statsOfErrors(loo), true), cell(statsOfErrors(chk), false))
	}
	n, ok := 0, 0
	for _, l := range lines {
		if l.LOSO == nil {
			continue
		}
		n++
		within := true
		for _, c := range l.LOSO {
			within = within && c.Within()
		}
		if within {
			ok++
		}
	}
	fmt.Fprintf(&b, "\nleft one source out: %d of %d fit rows within tolerance\n", ok, n)
	return b.String()
}
