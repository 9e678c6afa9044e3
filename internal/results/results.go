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
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
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

// Capacity is a capacity search under the SLO (package capacity): the
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
	// OutOfReach says no load met the SLO (capacity.Result); Borderline
	// why a found capacity is close to a coin flip.
	OutOfReach bool          `json:"out_of_reach,omitempty"`
	Borderline string        `json:"borderline,omitempty"`
	Runs       []CapacityRun `json:"runs"`
}

// CapacityRun is one run of a capacity search (capacity.Trial).
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
	// SteadyMetrics are the figures of Metrics a window has, over the
	// run's steady-state window (result.SteadyMetrics); absent when the
	// run has none (its result's steady_window says why). The bench lines
	// and the gate carry Metrics (docs/load-shapes.md).
	SteadyMetrics map[string]float64 `json:"steady_metrics,omitempty"`
	// Server holds the /metrics deltas and the sampler's summary.
	Server Server `json:"server"`
	// Checks are the assertions and their outcome.
	Checks []verdict.Check `json:"checks"`
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

// Record is one run as its caller hands it to the Writer: the run's
// entry of summary.json, its requests and its sampler points. Package
// orchestrate/record builds it from the run pipeline's result; the Writer
// sets Run.Rep and each line's run and repetition.
type Record struct {
	Run     Run
	Samples []sample.Sample
	// Series are the run's sampler points; nil when no sampler ran.
	Series []SeriesLine
}

// Add records one run, its samples and its time series.
func (w *Writer) Add(rec Record) {
	w.mu.Lock()
	defer w.mu.Unlock()
	name := rec.Run.Name
	rep := w.reps[name]
	w.reps[name]++
	rec.Run.Rep = rep
	w.sum.Runs = append(w.sum.Runs, rec.Run)
	w.fail(w.appendTo(SamplesFile, func(f io.Writer) error { return writeSamples(f, name, rep, rec.Samples) }))
	if rec.Series != nil {
		w.fail(w.appendTo(TimeSeriesFile, func(f io.Writer) error { return writeSeries(f, name, rep, rec.Series) }))
	}
}

// Fail records an error met while building a record for the folder (the
// run could not be turned into one): Close returns the first error.
func (w *Writer) Fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fail(err)
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

// AddCapacity records a capacity search; the Writer sets c.Rep.
func (w *Writer) AddCapacity(c Capacity) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := "capacity/" + c.Profile + "/" + c.Scenario
	c.Rep = w.reps[key]
	w.reps[key]++
	if c.Runs == nil {
		c.Runs = []CapacityRun{}
	}
	w.sum.Capacities = append(w.sum.Capacities, c)
}

// AddKnee records a sweep's knee; the Writer sets k.Rep.
func (w *Writer) AddKnee(k Knee) {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := "knee/" + k.Profile + "/" + k.Scenario
	k.Rep = w.reps[key]
	w.reps[key]++
	if k.Steps == nil {
		k.Steps = []Step{}
	}
	w.sum.Knees = append(w.sum.Knees, k)
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

func writeSeries(w io.Writer, name string, rep int, series []SeriesLine) error {
	enc := json.NewEncoder(w)
	for _, line := range series {
		line.Run, line.Rep = name, rep
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
