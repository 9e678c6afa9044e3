// Package results writes the suite's results folder (docs/bench-format.md):
// summary.json with every run's vLLM figures, server deltas and checks,
// samples.jsonl with every request, and timeseries.jsonl with the metrics
// sampler's points. bench.txt, the benchfmt output, is what `go test`
// prints: a tee of its output (make bench, make perf-gate), or else the
// suite's own copy (package suite's Main). The report command re-renders
// everything from the folder alone.
//
// One go test process writes one folder: its suites (TestPerf,
// TestPerfPrefixCachingOff, BenchmarkPerf) share one Writer, which
// appends to the JSON Lines files run by run and rewrites summary.json
// whole at every Close.
package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/vllmperf/vllmperf/internal/harness"
	"github.com/vllmperf/vllmperf/internal/harness/check"
	"github.com/vllmperf/vllmperf/internal/harness/knee"
	"github.com/vllmperf/vllmperf/internal/harness/sample"
	"github.com/vllmperf/vllmperf/internal/harness/scenario"
	"github.com/vllmperf/vllmperf/internal/harness/slocapacity"
	"github.com/vllmperf/vllmperf/internal/harness/vllmfmt"
)

// The files of a results folder.
const (
	SummaryFile    = "summary.json"
	SamplesFile    = "samples.jsonl"
	TimeSeriesFile = "timeseries.jsonl"
	BenchFile      = "bench.txt"
)

// ConfigGPUs is the key of a profile's configuration (Summary.Config)
// that says how many GPUs its server used: tensor × pipeline × data
// parallel size of the profile's flags. It is the folder's only, not a
// benchfmt config line; absent for a deployment the suite did not start.
const ConfigGPUs = "gpus"

// Summary is summary.json.
type Summary struct {
	// Config holds the file-level configuration (backend, gpu, model,
	// vllm-version, image) of each profile, keyed by profile.
	Config map[string]map[string]string `json:"config"`
	// Runs are the runs in the order they ended.
	Runs []Run `json:"runs"`
	// Knees are the sweeps' knees.
	Knees []Knee `json:"knees"`
	// Capacities are the capacity searches (absent when none ran).
	Capacities []Capacity `json:"capacities,omitempty"`
}

// Capacity is a capacity search under the SLO (package slocapacity): the
// sentence it states and the runs behind it.
type Capacity struct {
	Profile  string `json:"profile"`
	Scenario string `json:"scenario"`
	Rep      int    `json:"rep"`
	// Over is rate or concurrency; Found whether the runs bracketed the
	// capacity, Statement the result in words (or why it was not found).
	Over      string `json:"over"`
	Found     bool   `json:"found"`
	Statement string `json:"statement"`
	// OutOfReach says no load met the SLO (slocapacity.Result); Borderline
	// why a found capacity is close to a coin flip.
	OutOfReach bool          `json:"out_of_reach,omitempty"`
	Borderline string        `json:"borderline,omitempty"`
	Runs       []CapacityRun `json:"runs"`
}

// CapacityRun is one run of a capacity search (slocapacity.Trial).
type CapacityRun struct {
	Level     float64  `json:"level"`
	Requests  int      `json:"requests"`
	Good      int      `json:"good"`
	TTFTP99Ms *float64 `json:"ttft_p99_ms,omitempty"`
	TPOTP99Ms *float64 `json:"tpot_p99_ms,omitempty"`
	ReqPerSec float64  `json:"completed_req_per_s"`
	Users     float64  `json:"users"`
	// WaitingPeak is the server's queue peak, when it exposes its queue.
	WaitingPeak *float64 `json:"waiting_peak,omitempty"`
	Pass        bool     `json:"pass"`
	Notes       []string `json:"notes,omitempty"`
}

// Run is one run of a point.
type Run struct {
	// Name is the benchmark name without "BenchmarkPerf/" and the
	// GOMAXPROCS suffix: profile=basic/scenario=concurrency-sweep/conc=8.
	Name     string `json:"name"`
	Profile  string `json:"profile"`
	Scenario string `json:"scenario"`
	Point    string `json:"point"`
	// Rep counts the runs of the same name before this one (-count).
	Rep int `json:"rep"`
	// Concurrency is the closed-loop concurrency or open-loop cap; Rate
	// the open-loop rate ("inf" allowed), empty for a closed loop.
	Concurrency int    `json:"concurrency"`
	Rate        string `json:"rate,omitempty"`
	// Result holds vLLM's --save-result keys (and vllmperf's own).
	Result json.RawMessage `json:"result"`
	// Classes holds the same per class, when the point mixes classes.
	Classes map[string]json.RawMessage `json:"classes,omitempty"`
	// Metrics are the bench units reported for the run.
	Metrics map[string]float64 `json:"metrics"`
	// Server holds the /metrics deltas and the sampler's summary.
	Server Server `json:"server"`
	// Checks are the assertions and their outcome.
	Checks []check.Result `json:"checks"`
	// Warnings are the run's non-fatal problems.
	Warnings []string `json:"warnings,omitempty"`
}

// Server is the server's side of a run.
type Server struct {
	// Counters are the counter deltas by canonical name (sums over label
	// sets), for every counter the server exposed.
	Counters map[string]float64 `json:"counters,omitempty"`
	// Histograms are the histogram deltas: count, sum, mean, p50, p99.
	Histograms map[string]HistogramDelta `json:"histograms,omitempty"`
	// Series summarises the sampler's points.
	Series any `json:"series,omitempty"`
	// ScrapeError is why the deltas are missing.
	ScrapeError string `json:"scrape_error,omitempty"`
	// DrainWait is how long the queues took to empty after the load (ms).
	DrainWaitMS float64 `json:"drain_wait_ms"`
}

// HistogramDelta summarises one histogram's delta over a run; percentiles
// are interpolated within buckets as Prometheus's histogram_quantile does.
type HistogramDelta struct {
	Count float64  `json:"count"`
	Sum   float64  `json:"sum"`
	Mean  *float64 `json:"mean"`
	P50   *float64 `json:"p50"`
	P99   *float64 `json:"p99"`
}

// Knee is a sweep's knee.
type Knee struct {
	Profile     string   `json:"profile"`
	Scenario    string   `json:"scenario"`
	Rep         int      `json:"rep"`
	Knee        int      `json:"knee_concurrency"`
	Saturation  int      `json:"saturation_concurrency"`
	SLOMax      int      `json:"slo_concurrency"`
	Recommended int      `json:"recommended_concurrency"`
	Explanation []string `json:"explanation"`
	Steps       []Step   `json:"steps"`
}

// Step is a knee.Step as JSON.
type Step struct {
	From          int     `json:"from"`
	To            int     `json:"to"`
	Gain          float64 `json:"throughput_gain"`
	LatencyGrowth float64 `json:"latency_growth"`
	Saturated     bool    `json:"saturated"`
}

// Writer writes one results folder. It is safe for concurrent use, holds
// no file open between calls, and can be written to again after Close:
// the suites of one process share it (package suite), each Close writing
// summary.json with everything added so far.
type Writer struct {
	dir string

	mu   sync.Mutex
	sum  Summary
	reps map[string]int
	err  error
}

// Create makes dir (and its parents) and the folder's files, empty. A
// folder that already holds results is refused, so that a run never mixes
// with another; an existing folder with only bench.txt (make bench tees it
// there) is fine.
func Create(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	for _, f := range []string{SummaryFile, SamplesFile, TimeSeriesFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return nil, fmt.Errorf("results: %s already holds %s: give a new folder (make bench uses results/<UTC timestamp>)", dir, f)
		}
	}
	w := &Writer{dir: dir, reps: map[string]int{}, sum: Summary{Config: map[string]map[string]string{}, Runs: []Run{}, Knees: []Knee{}}}
	for _, f := range []string{SamplesFile, TimeSeriesFile} {
		fh, err := os.OpenFile(filepath.Join(dir, f), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
		if err := fh.Close(); err != nil {
			return nil, fmt.Errorf("results: %w", err)
		}
	}
	return w, nil
}

// Dir is the folder written.
func (w *Writer) Dir() string { return w.dir }

// SetConfig records a profile's configuration lines.
func (w *Writer) SetConfig(profile string, cfg map[string]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sum.Config[profile] = cfg
}

// Add records one run, its samples and its time series.
func (w *Writer) Add(name, profile string, res *harness.Result, metrics map[string]float64, checks []check.Result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	rep := w.reps[name]
	w.reps[name]++
	run, err := newRun(name, profile, rep, res, metrics, checks)
	if err != nil {
		w.fail(err)
		return
	}
	w.sum.Runs = append(w.sum.Runs, run)
	w.fail(w.appendTo(SamplesFile, func(f io.Writer) error { return writeSamples(f, name, rep, res.Samples()) }))
	if res.Series != nil {
		w.fail(w.appendTo(TimeSeriesFile, func(f io.Writer) error { return writeSeries(f, name, rep, res) }))
	}
}

// appendTo appends what write writes to the folder's file name.
func (w *Writer) appendTo(name string, write func(io.Writer) error) error {
	f, err := os.OpenFile(filepath.Join(w.dir, name), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// AddCapacity records a capacity search.
func (w *Writer) AddCapacity(profile, scenario string, r *slocapacity.Result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := "capacity/" + profile + "/" + scenario
	rep := w.reps[key]
	w.reps[key]++
	c := Capacity{Profile: profile, Scenario: scenario, Rep: rep, Over: string(r.Config.Mode), Found: r.Found, Statement: r.Statement(),
		OutOfReach: r.OutOfReach, Borderline: r.Borderline, Runs: []CapacityRun{}}
	for _, t := range r.Trials {
		run := CapacityRun{Level: t.Level, Requests: t.Requests, Good: t.Good, ReqPerSec: t.ReqPerSec, Users: t.Users, Pass: t.Pass, Notes: t.Notes}
		if t.HasP99 {
			run.TTFTP99Ms, run.TPOTP99Ms = &t.TTFTP99, &t.TPOTP99
		}
		if t.HasWaiting {
			run.WaitingPeak = &t.WaitingPeak
		}
		c.Runs = append(c.Runs, run)
	}
	w.sum.Capacities = append(w.sum.Capacities, c)
}

// AddKnee records a sweep's knee.
func (w *Writer) AddKnee(profile, scenario string, k knee.Result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := "knee/" + profile + "/" + scenario
	rep := w.reps[key]
	w.reps[key]++
	kj := Knee{Profile: profile, Scenario: scenario, Rep: rep, Knee: k.Knee, Saturation: k.Saturation, SLOMax: k.SLOMax,
		Recommended: k.Recommended, Explanation: k.Explanation, Steps: []Step{}}
	for _, s := range k.Steps {
		kj.Steps = append(kj.Steps, Step{From: s.From, To: s.To, Gain: s.Gain, LatencyGrowth: s.LatencyGrowth, Saturated: s.Saturated})
	}
	w.sum.Knees = append(w.sum.Knees, kj)
}

func (w *Writer) fail(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

// Close writes summary.json with every run added so far (whole, through
// a temporary file renamed into place, so that a reader never sees half
// of it); it returns the first error met while writing. Runs added after
// it are written by the next Close.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	data, err := json.MarshalIndent(w.sum, "", "  ")
	w.fail(err)
	if err == nil {
		w.fail(writeAtomic(filepath.Join(w.dir, SummaryFile), append(data, '\n')))
	}
	if w.err != nil {
		return fmt.Errorf("results %s: %w", w.dir, w.err)
	}
	return nil
}

// WriteBench writes data, a go test -bench run's output, as dir's
// bench.txt, whole or not at all.
func WriteBench(dir string, data []byte) error {
	return writeAtomic(filepath.Join(dir, BenchFile), data)
}

// writeAtomic writes data to a temporary file next to path and renames it
// into place.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

func newRun(name, profile string, rep int, res *harness.Result, metrics map[string]float64, checks []check.Result) (Run, error) {
	p := res.Point
	run := Run{Name: name, Profile: profile, Point: p.Key, Rep: rep, Concurrency: p.Concurrency(), Metrics: metrics, Checks: checks}
	if p.Scenario != nil {
		run.Scenario = p.Scenario.Name
	}
	if p.Load.Rate > 0 {
		run.Rate = scenario.FormatRate(p.Load.Rate)
	}
	var buf bytes.Buffer
	if err := vllmfmt.WriteJSON(&buf, res.Summary, res.ReportMeta()); err != nil {
		return run, err
	}
	run.Result = json.RawMessage(bytes.Clone(bytes.TrimSpace(buf.Bytes())))
	for _, name := range res.ClassNames {
		cs := res.Classes[name]
		if cs == nil {
			continue
		}
		buf.Reset()
		if err := vllmfmt.WriteJSON(&buf, cs, res.ReportMeta()); err != nil {
			return run, err
		}
		if run.Classes == nil {
			run.Classes = map[string]json.RawMessage{}
		}
		run.Classes[name] = json.RawMessage(bytes.Clone(bytes.TrimSpace(buf.Bytes())))
	}
	run.Server = serverSide(res)
	for _, w := range res.Warnings {
		run.Warnings = append(run.Warnings, w.Error())
	}
	for _, w := range res.Summary.Warnings {
		run.Warnings = append(run.Warnings, w.Error())
	}
	return run, nil
}

func serverSide(res *harness.Result) Server {
	s := Server{DrainWaitMS: float64(res.DrainWait) / float64(time.Millisecond)}
	if res.ScrapeErr != nil {
		s.ScrapeError = res.ScrapeErr.Error()
	}
	if res.Series != nil {
		s.Series = res.Series.Summary()
	}
	d := res.Delta
	if d == nil {
		return s
	}
	for _, name := range d.Names() {
		if v, err := d.Counter(name); err == nil {
			if s.Counters == nil {
				s.Counters = map[string]float64{}
			}
			s.Counters[name] = v
			continue
		}
		h, err := d.Histogram(name)
		if err != nil {
			continue
		}
		hd := HistogramDelta{Count: h.Count, Sum: h.Sum}
		if v, err := h.Mean(); err == nil {
			hd.Mean = &v
		}
		if v, err := h.Quantile(0.5); err == nil {
			hd.P50 = &v
		}
		if v, err := h.Quantile(0.99); err == nil {
			hd.P99 = &v
		}
		if s.Histograms == nil {
			s.Histograms = map[string]HistogramDelta{}
		}
		s.Histograms[name] = hd
	}
	return s
}

// sampleLine is one line of samples.jsonl.
type sampleLine struct {
	Run string `json:"run"`
	Rep int    `json:"rep"`
	*sample.Sample
}

func writeSamples(w io.Writer, name string, rep int, samples []sample.Sample) error {
	enc := json.NewEncoder(w)
	for i := range samples {
		if err := enc.Encode(sampleLine{Run: name, Rep: rep, Sample: &samples[i]}); err != nil {
			return err
		}
	}
	return nil
}

// SeriesLine is one line of timeseries.jsonl.
type SeriesLine struct {
	Run      string  `json:"run"`
	Rep      int     `json:"rep"`
	T        float64 `json:"t_s"` // seconds since the run's measured phase started
	Running  float64 `json:"running"`
	Waiting  float64 `json:"waiting"`
	KVUsage  float64 `json:"kv_usage"`
	GenTokS  float64 `json:"gen_tok_s"`
	PromptTS float64 `json:"prompt_tok_s"`
}

func writeSeries(w io.Writer, name string, rep int, res *harness.Result) error {
	enc := json.NewEncoder(w)
	for _, p := range res.Series.Points {
		line := SeriesLine{Run: name, Rep: rep, T: p.At.Sub(res.Load.Start).Seconds(), Running: p.Running, Waiting: p.Waiting,
			KVUsage: p.KVUsage, GenTokS: p.GenerationTokensPerSec, PromptTS: p.PromptTokensPerSec}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}

// Read loads a results folder's summary.json.
func Read(dir string) (*Summary, error) {
	data, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		return nil, fmt.Errorf("results: %w (is %s a results folder? make bench writes them under results/)", err, dir)
	}
	var s Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("results: %s: %w", filepath.Join(dir, SummaryFile), err)
	}
	return &s, nil
}
