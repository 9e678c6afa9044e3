package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/results/history"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// HistoryFile is the history page `vllmperf history report` writes.
const HistoryFile = "history.html"

// TrendUnits are the headline units the trend charts draw, one chart each
// per benchmark.
var TrendUnits = []string{units.TTFTP50, units.TPOTP50, units.TokPerSec, units.E2ELP99}

// DefaultMaxBenchmarks is how many benchmarks of a key the history page
// draws when HistoryOptions does not say: those with a change point
// first, then the others in the order the runs list them.
const DefaultMaxBenchmarks = 6

// HistoryOptions say what a history page shows.
type HistoryOptions struct {
	// Filter selects runs, benchmarks and units (the charts draw
	// TrendUnits among the units kept; the check tests every unit kept).
	Filter history.Filter
	// Check tunes the change-point check (history.DefaultCheck when zero).
	Check history.CheckOptions
	// Thresholds gives the units' directions where the bench files do not
	// (nil for the defaults).
	Thresholds *thresholds.Set
	// MaxBenchmarks is the most benchmarks drawn per key (0 for
	// DefaultMaxBenchmarks).
	MaxBenchmarks int
}

// History is what history.html shows: every key's runs, the check's
// change points, and the headline units' trends.
type History struct {
	// Store is the store's folder.
	Store string
	// Check is the change-point check over the same runs.
	Check *history.CheckReport
	Keys  []HistoryKey
}

// HistoryKey is one key's part of the page.
type HistoryKey struct {
	Key string
	// Runs are the key's runs, oldest first.
	Runs    []HistoryRun
	Events  []history.Event
	Changes []history.Change
	// Benchmarks are the benchmarks drawn, with their charts.
	Benchmarks []TrendBenchmark
	// Left are the benchmarks not drawn (over MaxBenchmarks).
	Left []string
}

// HistoryRun is a run of the runs table.
type HistoryRun struct {
	N                                           int
	ID, Date, Commit, Image, VLLM, Checks, Note string
}

// TrendBenchmark is one benchmark's trend charts.
type TrendBenchmark struct {
	Name   string
	Charts []Chart
	// Missing says which headline units the benchmark lacks or could not
	// draw.
	Missing []string
}

// LoadHistory reads the store, checks it and builds its page.
func LoadHistory(store string, o HistoryOptions) (*History, error) {
	khs, rep, err := CheckStore(store, o)
	if err != nil {
		return nil, err
	}
	return BuildHistory(store, khs, rep, o)
}

// CheckStore reads the store, groups what o.Filter selects and checks it.
func CheckStore(store string, o HistoryOptions) ([]*history.KeyHistory, *history.CheckReport, error) {
	s, err := history.Open(store)
	if err != nil {
		return nil, nil, err
	}
	runs, err := s.Runs()
	if err != nil {
		return nil, nil, err
	}
	khs, err := history.Group(runs, o.Filter, o.Thresholds)
	if err != nil {
		return nil, nil, err
	}
	if o.Check == (history.CheckOptions{}) {
		o.Check = history.DefaultCheck
	}
	rep, err := history.Check(khs, o.Check)
	if err != nil {
		return nil, nil, err
	}
	rep.Store = store
	if o.Thresholds != nil {
		rep.Thresholds = o.Thresholds.Source
	}
	return khs, rep, nil
}

// ReportBenchmarks is how many benchmarks report.html's history section
// draws; the history page next to it draws HistoryOptions.MaxBenchmarks.
const ReportBenchmarks = 2

// AddHistory adds the history of the report's setup (the store's runs of
// its key, checked) to the report, and writes the history page of the same
// runs into the report's folder, linked from the report.
func (r *Report) AddHistory(store string, o HistoryOptions) (page string, err error) {
	o.Filter.Key = r.Key()
	khs, rep, err := CheckStore(store, o)
	if err != nil {
		return "", fmt.Errorf("report --history: %w", err)
	}
	short := o
	short.MaxBenchmarks = ReportBenchmarks
	if r.History, err = BuildHistory(store, khs, rep, short); err != nil {
		return "", err
	}
	h, err := BuildHistory(store, khs, rep, o)
	if err != nil {
		return "", err
	}
	if page, err = WriteHistory(r.folder.Dir, h); err != nil {
		return "", err
	}
	r.HistoryLink = HistoryFile
	return page, nil
}

// BuildHistory builds the page of key histories checked by rep.
func BuildHistory(store string, khs []*history.KeyHistory, rep *history.CheckReport, o HistoryOptions) (*History, error) {
	maxBench := o.MaxBenchmarks
	if maxBench == 0 {
		maxBench = DefaultMaxBenchmarks
	}
	h := &History{Store: store, Check: rep}
	for ki, kh := range khs {
		hk := HistoryKey{Key: kh.Key, Events: kh.Events}
		for _, c := range rep.Changes {
			if c.Key == kh.Key {
				hk.Changes = append(hk.Changes, c)
			}
		}
		hk.Runs = historyRuns(kh)
		for _, name := range drawOrder(kh, hk.Changes) {
			if len(hk.Benchmarks) == maxBench {
				hk.Left = append(hk.Left, name)
				continue
			}
			hk.Benchmarks = append(hk.Benchmarks, trendBenchmark(fmt.Sprintf("k%d", ki+1), kh, name, hk.Changes))
		}
		h.Keys = append(h.Keys, hk)
	}
	return h, nil
}

// Charts are every chart of the page, in page order.
func (h *History) Charts() []Chart {
	var out []Chart
	for _, k := range h.Keys {
		for _, b := range k.Benchmarks {
			out = append(out, b.Charts...)
		}
	}
	return out
}

func historyRuns(kh *history.KeyHistory) []HistoryRun {
	notes := map[int][]string{}
	for _, e := range kh.Events {
		notes[e.Run] = append(notes[e.Run], e.Text)
	}
	var out []HistoryRun
	for i, r := range kh.Runs {
		commit := r.Commit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		out = append(out, HistoryRun{N: i + 1, ID: r.ID, Date: r.Date.Format(time.DateTime), Commit: commit, Image: r.Config["image"],
			VLLM: r.Config["vllm-version"], Checks: r.Checks.String(), Note: strings.Join(notes[i], "; ")})
	}
	return out
}

// drawOrder lists the key's benchmarks: those with a change point, the
// largest change first, then the rest in the runs' order.
func drawOrder(kh *history.KeyHistory, changes []history.Change) []string {
	var out []string
	for _, c := range changes {
		// A profile series' change has no chart of its own: its
		// benchmarks' changes, tested at it, are drawn on theirs.
		if len(c.Members) == 0 && !slices.Contains(out, c.Benchmark) {
			out = append(out, c.Benchmark)
		}
	}
	for _, s := range kh.Series {
		if !slices.Contains(out, s.Benchmark) {
			out = append(out, s.Benchmark)
		}
	}
	return out
}

func trendBenchmark(prefix string, kh *history.KeyHistory, name string, changes []history.Change) TrendBenchmark {
	tb := TrendBenchmark{Name: name}
	for _, unit := range TrendUnits {
		i := slices.IndexFunc(kh.Series, func(s *history.Series) bool { return s.Benchmark == name && s.Unit == unit })
		if i < 0 {
			tb.Missing = append(tb.Missing, unit+": not measured")
			continue
		}
		var mine []history.Change
		for _, c := range changes {
			if c.Benchmark == name && c.Unit == unit {
				mine = append(mine, c)
			}
		}
		ch, err := trendChart("trend-"+prefix+"-"+slug(benchname.Short(name)+"-"+unit), len(kh.Runs), kh.Series[i], mine, kh.Events)
		if err != nil {
			tb.Missing = append(tb.Missing, unit+": "+err.Error())
			continue
		}
		tb.Charts = append(tb.Charts, ch)
	}
	return tb
}

// changeColor marks change points and the segments' medians.
var changeColor = palette[3] // vermillion

// repColor draws the runs' repetitions.
var repColor = color.RGBA{0xA6, 0xC8, 0xE6, 0xff}

// unitAxis is a unit's name and axis label, and the divisor to its scale.
func unitAxis(unit string) (name, label string, scale float64) {
	name = units.Label(unit) // a class's latency too: "short TTFT p99"
	if units.KindOf(unit) == units.KindNanoseconds {
		return name, name + " (ms)", 1e6
	}
	if unit == units.TokPerSec {
		return name, "output tokens/s", 1
	}
	return name, name, 1
}

// trendChart draws one series across the key's n runs: each run's median
// (and its repetitions), the segments' medians and the change points, and
// the key's events.
func trendChart(id string, n int, s *history.Series, changes []history.Change, events []history.Event) (Chart, error) {
	name, label, scale := unitAxis(s.Unit)
	b := newChart(id, name+": "+benchname.Short(s.Benchmark), "run (oldest first)", label)
	b.caption = fmt.Sprintf("%s, better %s. Each dot is a run's median over its repetitions", s.Unit, s.Direction)
	var reps, meds plotter.XYs
	multi := false
	for _, p := range s.Points {
		x := float64(p.Run + 1)
		meds = append(meds, plotter.XY{X: x, Y: p.Median / scale})
		for _, v := range p.Values {
			reps = append(reps, plotter.XY{X: x, Y: v / scale})
		}
		multi = multi || len(p.Values) > 1
	}
	if multi {
		b.scatter("repetitions", repColor, reps, 1.6)
		b.caption += "; the pale dots are the repetitions"
	}
	b.series("run median", 0, meds, look{marks: true})
	b.p.X.Min, b.p.X.Max = 0.5, float64(n)+0.5
	lo, hi := b.yRange()
	if len(changes) > 0 {
		b.segments(s, changes, scale)
		for i, c := range changes {
			legend := ""
			if i == 0 {
				legend = "change point"
			}
			text := fmt.Sprintf("%+.1f%%", c.ChangePct)
			b.colorLine(plotter.XYs{{X: float64(c.Run.Index) + 0.5, Y: lo}, {X: float64(c.Run.Index) + 0.5, Y: hi}}, changeColor, legend)
			b.label(float64(c.Run.Index)+0.5, hi, text, 0)
			b.marks = append(b.marks, text)
		}
		b.colors = append(b.colors, hexColor(changeColor))
		b.caption += "; the vermillion line is where a change starts and the dashed steps are the segments' medians (history check)"
	}
	for i, e := range events {
		legend := ""
		if i == 0 {
			legend = "known event"
		}
		text := eventLabel(e)
		b.mark(plotter.XYs{{X: float64(e.Run) + 0.5, Y: lo}, {X: float64(e.Run) + 0.5, Y: hi}}, legend)
		b.label(float64(e.Run)+0.5, lo+(hi-lo)*0.08, text, 0)
		b.marks = append(b.marks, text)
	}
	if len(events) > 0 {
		b.colors = append(b.colors, hexColor(markColor))
		b.caption += "; grey lines are known events (image or vLLM changes, re-baselines, notes)"
	}
	b.caption += "."
	return b.render()
}

// eventLabel is an event's short name on a chart.
func eventLabel(e history.Event) string {
	switch e.Kind {
	case history.EventImage, history.EventVLLMVersion:
		_, to, _ := strings.Cut(e.Text, " → ")
		if i := strings.LastIndexAny(to, ":/"); i >= 0 && e.Kind == history.EventImage {
			to = to[i+1:]
		}
		if e.Kind == history.EventVLLMVersion {
			return "vLLM " + to
		}
		return "image " + to
	case history.EventBaseline:
		return "re-baseline"
	}
	if len([]rune(e.Text)) > 28 {
		return string([]rune(e.Text)[:27]) + "…"
	}
	return e.Text
}

// scatter adds dots without a line.
func (b *chartBuilder) scatter(name string, c color.RGBA, xys plotter.XYs, radius float64) {
	xys = b.clean(xys)
	if len(xys) == 0 {
		return
	}
	s, err := plotter.NewScatter(xys)
	if err != nil {
		return
	}
	s.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(radius), Shape: draw.CircleGlyph{}}
	b.p.Add(s)
	b.addLegend(name, s)
	b.colors = append(b.colors, hexColor(c))
	b.points += len(xys)
}

// colorLine draws a solid marker line in c; legend names it once.
func (b *chartBuilder) colorLine(xys plotter.XYs, c color.RGBA, legend string) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return
	}
	l.Color = c
	l.Width = vg.Points(1.4)
	b.p.Add(l)
	if legend != "" {
		b.addLegend(legend, l)
	}
}

// segments draws each segment's median between the change points.
func (b *chartBuilder) segments(s *history.Series, changes []history.Change, scale float64) {
	starts := []int{0}
	for _, c := range changes {
		starts = append(starts, c.Run.Index)
	}
	slices.Sort(starts)
	for i, start := range starts {
		end := math.MaxInt
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		var vs []float64
		first, last := -1, -1
		for _, p := range s.Points {
			if p.Run >= start && p.Run < end {
				vs = append(vs, p.Median)
				if first < 0 {
					first = p.Run
				}
				last = p.Run
			}
		}
		if len(vs) == 0 {
			continue
		}
		slices.Sort(vs)
		m := vs[len(vs)/2]
		if len(vs)%2 == 0 {
			m = (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2
		}
		l, err := plotter.NewLine(plotter.XYs{{X: float64(first) + 0.6, Y: m / scale}, {X: float64(last) + 1.4, Y: m / scale}})
		if err != nil {
			continue
		}
		l.Color = changeColor
		l.Width = vg.Points(1.2)
		l.Dashes = dashed
		b.p.Add(l)
		if i == 0 {
			b.addLegend("segment median", l)
		}
	}
}

//go:embed history.html.tmpl
var historySource string

// historyFuncs are the functions of the history templates, in both pages.
var historyFuncs = template.FuncMap{
	"hunit":  units.FormatValue,
	"hpct":   gate.FormatDelta,
	"plus1":  func(i int) int { return i + 1 },
	"hbench": benchname.Short,
	"hevents": func(es []history.Event) string {
		var out []string
		for _, e := range es {
			out = append(out, fmt.Sprintf("run %d: %s", e.Run+1, eventLabel(e)))
		}
		return strings.Join(out, "; ")
	},
}

var historyTemplate = template.Must(template.Must(template.New("history").Funcs(historyFuncs).Funcs(template.FuncMap{
	"join": strings.Join,
	"base": filepath.Base,
}).Parse(historySource)).Parse(commonSource))

// HistoryHTML writes the history page: one self-contained HTML file,
// inline SVG charts drawn with gonum.org/v1/plot, no script.
func HistoryHTML(w io.Writer, h *History) error {
	if err := historyTemplate.Execute(w, h); err != nil {
		return fmt.Errorf("%s: %w", HistoryFile, err)
	}
	return nil
}

// WriteHistory writes dir/history.html (dir is created) and returns its
// path.
func WriteHistory(dir string, h *History) (string, error) {
	var buf bytes.Buffer
	if err := HistoryHTML(&buf, h); err != nil {
		return "", err
	}
	if err := mkdir(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, HistoryFile)
	return path, writeAtomic(path, buf.Bytes())
}
