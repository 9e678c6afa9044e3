package report

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// The report's charts, built from its folder. A chart that has no data is
// left out, and Missing says why.

// ProfileCharts are one profile's charts.
type ProfileCharts struct {
	Profile string
	// TTFT and TPOT are the distributions (CDF) of the sweep's points, or
	// of the profile's runs without a sweep.
	TTFT, TPOT *Chart
	// Timeline are tokens/s, running/waiting and KV usage over the
	// profile's runs laid end to end.
	Timeline []Chart
	// Missing says which charts have no data, and why.
	Missing []string
}

// Charts are every chart of a report.
type Charts struct {
	// Throughput is tokens/s against concurrency, every profile's sweep
	// with its knee (nil without sweeps).
	Throughput *Chart
	// Pareto is tokens/s per user against tokens/s per GPU over every
	// sweep's points, with the frontier (nil without sweeps).
	Pareto *Chart
	// Latency are the sweeps' latencies against concurrency, by the
	// report's sweep index (nil where there is no data).
	Latency []*Chart
	// Ramps are each ramp-up's throughput and latency charts, by the
	// report's ramp index (nil where there is no data).
	Ramps    [][2]*Chart
	Profiles []ProfileCharts
	// Trends are the history's trend charts (report --history).
	Trends  []Chart
	Missing []string
}

// All returns every chart, in page order.
func (c *Charts) All() []Chart {
	var out []Chart
	for _, ch := range []*Chart{c.Throughput, c.Pareto} {
		if ch != nil {
			out = append(out, *ch)
		}
	}
	for _, ch := range c.Latency {
		if ch != nil {
			out = append(out, *ch)
		}
	}
	for _, pair := range c.Ramps {
		for _, ch := range pair {
			if ch != nil {
				out = append(out, *ch)
			}
		}
	}
	for _, p := range c.Profiles {
		for _, ch := range []*Chart{p.TTFT, p.TPOT} {
			if ch != nil {
				out = append(out, *ch)
			}
		}
	}
	for _, p := range c.Profiles {
		out = append(out, p.Timeline...)
	}
	return append(out, c.Trends...)
}

// BuildCharts draws the report's charts.
func (r *Report) BuildCharts() *Charts {
	c := &Charts{}
	if len(r.Sweeps) > 0 {
		ch, err := throughputChart(r.Sweeps)
		if err != nil {
			c.Missing = append(c.Missing, err.Error())
		} else {
			c.Throughput = &ch
		}
		if ch, err := r.paretoChart(); err != nil {
			c.Missing = append(c.Missing, err.Error())
		} else {
			c.Pareto = &ch
		}
	}
	for _, sw := range r.Sweeps {
		ch, err := latencyChart(sw)
		if err != nil {
			c.Missing = append(c.Missing, err.Error())
			c.Latency = append(c.Latency, nil)
			continue
		}
		c.Latency = append(c.Latency, &ch)
	}
	for _, rr := range r.Ramps {
		var pair [2]*Chart
		for i, draw := range []func(RampRun) (Chart, error){rampThroughputChart, rampLatencyChart} {
			ch, err := draw(rr)
			if err != nil {
				c.Missing = append(c.Missing, err.Error())
				continue
			}
			pair[i] = &ch
		}
		c.Ramps = append(c.Ramps, pair)
	}
	for _, p := range r.Profiles {
		c.Profiles = append(c.Profiles, r.profileCharts(p.Name))
	}
	if r.History != nil {
		c.Trends = r.History.Charts()
	}
	return c
}

func (r *Report) profileCharts(profile string) ProfileCharts {
	pc := ProfileCharts{Profile: profile}
	keep := func(dst **Chart, ch Chart, err error) {
		if err != nil {
			pc.Missing = append(pc.Missing, err.Error())
			return
		}
		*dst = &ch
	}
	var sw *Sweep
	for i := range r.Sweeps {
		if r.Sweeps[i].Profile == profile {
			sw = &r.Sweeps[i]
			break
		}
	}
	var lines []cdfLine
	if sw != nil {
		for _, p := range sw.Points {
			lines = append(lines, cdfLine{name: fmt.Sprintf("c=%d", p.Concurrency), samples: r.folder.Samples(p.key)})
		}
	} else {
		for _, run := range r.Runs {
			if run.Profile == profile && !isStartup(run) && len(lines) < len(palette) {
				lines = append(lines, cdfLine{name: r.shortLabel(run), samples: r.folder.Samples(run.Key())})
			}
		}
	}
	what := profile
	if sw != nil {
		what += " / " + sw.Scenario
	}
	ch, err := cdfChart("ttft-cdf-"+slug(profile), "TTFT distribution: "+what, "TTFT (ms, log scale)", lines, (*sample.Sample).TTFT, true)
	keep(&pc.TTFT, ch, err)
	ch, err = cdfChart("tpot-cdf-"+slug(profile), "TPOT distribution: "+what, "TPOT (ms)", lines, (*sample.Sample).TPOT, false)
	keep(&pc.TPOT, ch, err)
	tl, err := r.timeline(profile)
	if err != nil {
		pc.Missing = append(pc.Missing, err.Error())
	}
	pc.Timeline = tl
	return pc
}

func isStartup(r results.Run) bool {
	return r.Scenario == "" || r.Scenario == benchname.StartupScenario
}

// throughputChart: output tokens/s against concurrency, one line per sweep,
// the knee ringed.
func throughputChart(sws []Sweep) (Chart, error) {
	b := newChart("throughput", "Output tokens/s against concurrency", "concurrency (requests in flight, log scale)", "output tokens/s")
	var cs []int
	var knees plotter.XYs
	var kneeColors []int
	for i, sw := range sws {
		var xys plotter.XYs
		for _, p := range sw.Points {
			tokS := p.Value(units.TokPerSec)
			xys = append(xys, plotter.XY{X: float64(p.Concurrency), Y: tokS})
			cs = append(cs, p.Concurrency)
			if sw.isKnee(p.Concurrency) && !math.IsNaN(tokS) {
				knees = append(knees, plotter.XY{X: float64(p.Concurrency), Y: tokS})
				kneeColors = append(kneeColors, i)
			}
		}
		b.series(sweepName(sw, sws), i, xys, look{marks: true})
	}
	slices.Sort(cs)
	concurrencyAxis(&b.p.X, slices.Compact(cs))
	b.p.Y.Min = 0
	b.caption = "From summary.json: the output tokens/s of each sweep point; a ring marks each sweep's knee."
	for j, k := range knees {
		s, err := plotter.NewScatter(plotter.XYs{k})
		if err != nil {
			continue
		}
		s.GlyphStyle = draw.GlyphStyle{Color: paletteColor(kneeColors[j]), Radius: vg.Points(6), Shape: draw.RingGlyph{}}
		b.p.Add(s)
		if j == 0 {
			legend := *s
			legend.GlyphStyle.Color = markColor
			b.addLegend("knee", &legend)
		}
	}
	return b.render()
}

// sweepName is the profile, with the scenario when several sweeps share a
// profile.
func sweepName(sw Sweep, all []Sweep) string {
	n := 0
	for _, o := range all {
		if o.Profile == sw.Profile {
			n++
		}
	}
	if n > 1 {
		return sw.Profile + " / " + sw.Scenario
	}
	return sw.Profile
}

// latencyChart: P50 and P99 latencies against concurrency, the knee and
// the recommended limit marked.
func latencyChart(sw Sweep) (Chart, error) {
	b := newChart("latency-"+slug(sw.Profile+"-"+sw.Scenario), "Latency against concurrency: "+sw.Profile+" / "+sw.Scenario,
		"concurrency (requests in flight, log scale)", "latency (ms, log scale)")
	b.logY = true
	b.width = narrowChartWidth
	logAxis(&b.p.Y)
	var cs []int
	get := func(unit string) plotter.XYs {
		var xys plotter.XYs
		for _, p := range sw.Points {
			xys = append(xys, plotter.XY{X: float64(p.Concurrency), Y: p.Value(unit)})
		}
		return xys
	}
	for _, p := range sw.Points {
		cs = append(cs, p.Concurrency)
	}
	for _, s := range []struct {
		unit  string
		color int
		look  look
	}{
		{units.TTFTP50, 0, look{marks: true}},
		{units.TTFTP99, 0, look{dashed: true, marks: true}},
		{units.TPOTP50, 1, look{marks: true}},
		{units.TPOTP99, 1, look{dashed: true, marks: true}},
		{units.E2ELP99, 2, look{dashed: true, marks: true}},
	} {
		b.series(units.Label(s.unit), s.color, get(s.unit), s.look)
	}
	b.caption = "From summary.json: each sweep point's client-side percentiles (vLLM's definitions); dashed lines are P99."
	slices.Sort(cs)
	concurrencyAxis(&b.p.X, slices.Compact(cs))
	if k := sw.Knee; k != nil && b.points > 0 {
		lo, hi := b.yRange()
		if k.Knee > 0 {
			b.vline(float64(k.Knee), fmt.Sprintf("knee %d", k.Knee), "knee", lo, hi)
		}
		if k.Recommended > 0 && k.Recommended != k.Knee {
			b.vline(float64(k.Recommended), fmt.Sprintf("recommended %d", k.Recommended), "", lo, hi)
		}
	}
	return b.render()
}

// yRange is the y range of the data added so far.
func (b *chartBuilder) yRange() (float64, float64) { return b.p.Y.Min, b.p.Y.Max }

// cdfLine is one distribution: its legend name and samples.
type cdfLine struct {
	name    string
	samples []sample.Sample
}

// cdfChart: the empirical CDF of a per-request latency over each line's
// measured successful requests.
func cdfChart(id, title, xLabel string, lines []cdfLine, get func(*sample.Sample) (time.Duration, bool), logX bool) (Chart, error) {
	b := newChart(id, title, xLabel, "share of requests at or below")
	b.logX = logX
	if logX {
		logAxis(&b.p.X)
	}
	requests := 0
	for i, l := range lines {
		var v []float64
		for j := range l.samples {
			s := &l.samples[j]
			if s.Warmup {
				continue
			}
			if d, ok := get(s); ok {
				v = append(v, float64(d.Nanoseconds())/1e6)
			}
		}
		slices.Sort(v)
		requests += len(v)
		var xys plotter.XYs
		if len(v) > 0 {
			xys = append(xys, plotter.XY{X: v[0], Y: 0})
		}
		for j, x := range v {
			xys = append(xys, plotter.XY{X: x, Y: float64(j+1) / float64(len(v))})
		}
		b.series(l.name, i, xys, look{step: true})
	}
	b.p.Y.Min, b.p.Y.Max = 0, 1
	if b.points > 0 { // keep the curves off the axes
		if logX {
			b.p.X.Min, b.p.X.Max = b.p.X.Min/1.15, b.p.X.Max*1.05
		} else {
			pad := 0.04 * (b.p.X.Max - b.p.X.Min)
			b.p.X.Min, b.p.X.Max = b.p.X.Min-pad, b.p.X.Max+pad
		}
	}
	b.caption = fmt.Sprintf("From samples.jsonl: %d measured successful requests; warm-up left out.", requests)
	return b.render()
}

// runSeries is one run's sampler points on the profile's timeline.
type runSeries struct {
	label  string
	offset float64
	points []results.SeriesLine
}

// timelineGap separates runs on the timeline (seconds); timelineHeadroom
// raises the y axis above the data to make room for the runs' labels.
const (
	timelineGap      = 0.5
	timelineHeadroom = 1.5
)

// timeline lays the profile's runs end to end (warm-up left out) and draws
// tokens/s per sampler window, running and waiting requests, and KV-cache
// usage over them.
func (r *Report) timeline(profile string) ([]Chart, error) {
	segs, cursor := r.timelineSegments(profile)
	if len(segs) == 0 {
		return nil, fmt.Errorf("%s: no sampler points during any run's load: the time series charts are left out", profile)
	}
	xy := func(get func(results.SeriesLine) float64) plotter.XYs {
		var out plotter.XYs
		for _, s := range segs {
			for _, p := range s.points {
				out = append(out, plotter.XY{X: s.offset + p.T, Y: get(p)})
			}
			out = append(out, plotter.XY{X: math.NaN(), Y: math.NaN()}) // a break between runs
		}
		return out
	}
	const xLabel = "time (s; the runs laid end to end, warm-up left out)"
	id := slug(profile)
	var out []Chart
	var errs []string
	tok := newChart("ts-tok-"+id, "Generation tokens/s during the load: "+profile, xLabel, "tokens/s per sampler window")
	tok.seriesBroken("generation tokens/s", 0, xy(func(p results.SeriesLine) float64 { return p.GenTokS }))
	queue := newChart("ts-queue-"+id, "Running and waiting requests: "+profile, xLabel, "requests")
	queue.seriesBroken("running", 2, xy(func(p results.SeriesLine) float64 { return p.Running }))
	queue.seriesBroken("waiting", 3, xy(func(p results.SeriesLine) float64 { return p.Waiting }))
	kv := newChart("ts-kv-"+id, "KV-cache usage: "+profile, xLabel, "KV-cache usage (%)")
	kvXY := xy(func(p results.SeriesLine) float64 { return 100 * p.KVUsage })
	kv.seriesBroken("KV-cache usage", 4, kvXY)
	peak := 0.0
	for _, p := range kvXY {
		if !math.IsNaN(p.Y) {
			peak = math.Max(peak, p.Y)
		}
	}
	ceiling := 100 * thresholds.DefaultDiagnosis.KVHigh
	if peak >= ceiling/2 {
		kv.hline(ceiling, fmt.Sprintf("%.0f%% (near the ceiling)", ceiling), 0, cursor)
	}
	n := 0
	for _, s := range segs {
		n += len(s.points)
	}
	for _, b := range []*chartBuilder{tok, queue, kv} {
		b.caption = fmt.Sprintf("From timeseries.jsonl: %d sampler points over %d runs; dashed lines separate the runs.", n, len(segs))
		b.p.Y.Min = 0
		b.p.X.Min, b.p.X.Max = 0, cursor
		_, hi := b.yRange()
		if !(hi > 0) {
			hi = 1
		}
		hi *= timelineHeadroom // room above the data for the runs' labels
		for _, s := range segs {
			b.vline(s.offset+s.points[0].T, "", "", 0, hi)
			b.label(s.offset+s.points[0].T, hi, s.label, math.Pi/2)
		}
		ch, err := b.render()
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out = append(out, ch)
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s: %s", profile, strings.Join(errs, "; "))
	}
	return out, nil
}

// timelineSegments lays the profile's load runs end to end: each run's
// sampler points (warm-up left out) from where the previous one ended, and
// where the last one ends.
func (r *Report) timelineSegments(profile string) (segs []runSeries, cursor float64) {
	for _, run := range r.Runs {
		if run.Profile != profile || isStartup(run) {
			continue
		}
		var pts []results.SeriesLine
		for _, p := range r.folder.Series(run.Key()) {
			if p.T >= 0 {
				pts = append(pts, p)
			}
		}
		if len(pts) == 0 {
			continue
		}
		seg := runSeries{label: r.shortLabel(run), offset: cursor - pts[0].T, points: pts}
		segs = append(segs, seg)
		cursor = seg.offset + pts[len(pts)-1].T + timelineGap
	}
	return segs, cursor
}

// seriesBroken adds a line that may hold NaN breaks: each unbroken stretch
// is drawn, under one legend entry.
func (b *chartBuilder) seriesBroken(name string, i int, xys plotter.XYs) {
	c := paletteColor(i)
	var first *plotter.Line
	flush := func(part plotter.XYs) {
		part = b.clean(part)
		if len(part) == 0 {
			return
		}
		l, err := plotter.NewLine(part)
		if err != nil {
			return
		}
		l.Color = c
		l.Width = vg.Points(1.4)
		b.p.Add(l)
		b.points += len(part)
		if first == nil {
			first = l
		}
	}
	var part plotter.XYs
	for _, p := range xys {
		if math.IsNaN(p.X) {
			flush(part)
			part = nil
			continue
		}
		part = append(part, p)
	}
	flush(part)
	if first != nil {
		b.addLegend(name, first)
		b.colors = append(b.colors, hexColor(c))
	}
}

// shortLabel names a run on a timeline or in a legend: c8 for a point of
// a knee sweep (a scenario with knee: true, whose knee the folder holds),
// else its scenario and point in short.
func (r *Report) shortLabel(run results.Run) string {
	pt := benchname.ParsePoint(run.Point).Short()
	for _, sw := range r.Sweeps {
		if sw.Knee != nil && sw.Profile == run.Profile && sw.Scenario == run.Scenario {
			return pt
		}
	}
	return strings.TrimSpace(run.Scenario + " " + pt)
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

// slug makes an HTML id from a name.
func slug(s string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
}
