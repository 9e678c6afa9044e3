package diagnose

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// facts are the measured figures of one run that the rules read. A figure
// the run does not have is NaN.
type facts struct {
	run     results.Run
	startup bool
	// concurrency is the closed-loop concurrency or the open-loop cap.
	concurrency float64

	// From the run's vLLM result (milliseconds, seconds, tokens).
	duration  float64
	ttftP50   float64
	ttftP99   float64
	itlMedian float64
	tpotP50   float64
	tokS      float64
	// promptMean is the prompt tokens per completed request.
	promptMean float64
	coldTTFT   float64

	// From the samples: per-request TPOT and chunk gaps, measured and
	// successful requests only.
	tpotN, itlN        int
	tpotCV, itlCV      float64
	tpotP99, itlP99P50 float64

	// From the server's deltas (milliseconds for times).
	queueMean, prefillMean, serverTTFTMean float64
	preemptions                            float64
	specAccept                             float64 // 0–1
	tokPerChunk                            float64

	// From the sampler's points during the measured phase.
	points                                 int
	waitingPeak, waitingMean, waitingShare float64
	runningPeak, runningP25, runningP75    float64
	kvPeak, kvHighShare                    float64

	// checks maps the run's checks by name to their result.
	checks map[string]verdict.Check
}

// vllmResult holds the keys of a run's --save-result JSON that the rules
// read; null figures stay nil.
type vllmResult struct {
	Duration         *float64 `json:"duration"`
	Completed        int      `json:"completed"`
	TotalInputTokens int      `json:"total_input_tokens"`
	MedianITL        *float64 `json:"median_itl_ms"`
	ColdTTFT         *float64 `json:"cold_ttft_ms"`
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func has(x float64) bool { return !math.IsNaN(x) }

// metric returns a bench unit of the run, NaN when it was not reported.
func metric(r results.Run, unit string) float64 {
	if v, ok := r.Metrics[unit]; ok {
		return v
	}
	return math.NaN()
}

// newFacts measures one run of folder f.
func newFacts(f *results.Folder, r results.Run, th thresholds.Diagnosis) (*facts, error) {
	x := &facts{run: r, startup: r.Scenario == benchname.StartupScenario || r.Scenario == "", concurrency: float64(r.Concurrency),
		checks: map[string]verdict.Check{}}
	var res vllmResult
	if len(r.Result) > 0 {
		if err := json.Unmarshal(r.Result, &res); err != nil {
			return nil, fmt.Errorf("diagnose: run %s: its result in %s: %w", r.Name, results.SummaryFile, err)
		}
	}
	x.duration = val(res.Duration)
	x.ttftP50 = metric(r, units.TTFTP50) / 1e6
	x.ttftP99 = metric(r, units.TTFTP99) / 1e6
	x.tpotP50 = metric(r, units.TPOTP50) / 1e6
	x.itlMedian = val(res.MedianITL)
	x.tokS = metric(r, units.TokPerSec)
	x.promptMean = math.NaN()
	if res.Completed > 0 {
		x.promptMean = float64(res.TotalInputTokens) / float64(res.Completed)
	}
	x.coldTTFT = val(res.ColdTTFT)
	if v := metric(r, units.ColdTTFT); has(v) {
		x.coldTTFT = v / 1e6
	}
	x.preemptions = metric(r, units.Preemptions)
	x.specAccept = metric(r, units.SpecAccept) / 100
	x.tokPerChunk = metric(r, units.TokPerChunk)
	x.serverTimes(r.Server)
	x.sampleSpread(f.Samples(r.Key()))
	x.seriesFigures(r, f.Series(r.Key()), th)
	for _, c := range r.Checks {
		x.checks[c.Name] = c
	}
	return x, nil
}

// serverTimes reads the server's mean queue, prefill and TTFT times.
func (x *facts) serverTimes(s results.Server) {
	mean := func(name string) float64 {
		h, ok := s.Histograms[name]
		if !ok || h.Mean == nil {
			return math.NaN()
		}
		return *h.Mean * 1e3
	}
	x.queueMean = mean(scrape.RequestQueueTimeSeconds)
	x.prefillMean = mean(scrape.RequestPrefillTimeSeconds)
	x.serverTTFTMean = mean(scrape.TimeToFirstTokenSeconds)
}

// sampleSpread measures the spread of per-request TPOT and of the gaps
// between chunks over the measured successful requests.
func (x *facts) sampleSpread(samples []sample.Sample) {
	var tpot, gaps []float64
	for i := range samples {
		s := &samples[i]
		if s.Warmup || !s.OK() {
			continue
		}
		if d, ok := s.TPOT(); ok {
			tpot = append(tpot, ms(d))
		}
		for _, g := range s.ITLs(nil) {
			gaps = append(gaps, ms(g))
		}
	}
	x.tpotN, x.itlN = len(tpot), len(gaps)
	x.tpotCV, x.tpotP99, x.itlCV, x.itlP99P50 = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if len(tpot) > 1 {
		x.tpotCV = cv(tpot)
		slices.Sort(tpot)
		x.tpotP99 = stats.Percentile(tpot, 99)
	}
	if len(gaps) > 1 {
		x.itlCV = cv(gaps)
		slices.Sort(gaps)
		x.itlP99P50 = stats.Percentile(gaps, 99) / stats.Percentile(gaps, 50)
	}
}

// seriesFigures summarises the sampler's points of the measured phase
// (0 ≤ t ≤ duration): the warm-up before and the drain after are left out.
// timeseries.jsonl writes a gauge the server did not expose as 0, so a
// gauge counts only when the run reported its peak (running-peak,
// waiting-peak, kv-peak-%: left out when unavailable).
func (x *facts) seriesFigures(r results.Run, series []results.SeriesLine, th thresholds.Diagnosis) {
	x.waitingPeak, x.waitingMean, x.waitingShare = math.NaN(), math.NaN(), math.NaN()
	x.runningPeak, x.runningP25, x.runningP75 = math.NaN(), math.NaN(), math.NaN()
	x.kvPeak, x.kvHighShare = math.NaN(), math.NaN()
	var waiting, running, kv []float64
	for _, p := range series {
		if p.T < 0 || (has(x.duration) && p.T > x.duration) {
			continue
		}
		waiting = append(waiting, p.Waiting)
		running = append(running, p.Running)
		kv = append(kv, p.KVUsage)
	}
	x.points = len(waiting)
	if x.points == 0 {
		return
	}
	if has(metric(r, units.WaitingPeak)) {
		x.waitingPeak, x.waitingMean = slices.Max(waiting), stats.Mean(waiting)
		x.waitingShare = share(waiting, func(v float64) bool { return v > 0 })
	}
	if has(metric(r, units.RunningPeak)) {
		x.runningPeak = slices.Max(running)
		slices.Sort(running)
		x.runningP25, x.runningP75 = stats.Percentile(running, 25), stats.Percentile(running, 75)
	}
	if has(metric(r, units.KVPeakPct)) {
		x.kvPeak = slices.Max(kv)
		x.kvHighShare = share(kv, func(v float64) bool { return v >= th.KVHigh })
	}
}

func share(xs []float64, pred func(float64) bool) float64 {
	n := 0
	for _, v := range xs {
		if pred(v) {
			n++
		}
	}
	return float64(n) / float64(len(xs))
}

// cv is the coefficient of variation: population standard deviation over
// the mean (numpy's std / mean).
func cv(xs []float64) float64 {
	m := stats.Mean(xs)
	if m == 0 {
		return math.NaN()
	}
	return stats.Std(xs) / m
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
