package result

import (
	"math"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/run/vllmfmt"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// distUnits are the latency percentiles reported per run, and per class
// (prefixed "<class>-") when a point mixes classes.
var distUnits = []struct {
	unit string
	dist func(*stats.Summary) stats.Dist
	p    float64
}{
	{units.TTFTP50, func(s *stats.Summary) stats.Dist { return s.TTFT }, 50},
	{units.TTFTP99, func(s *stats.Summary) stats.Dist { return s.TTFT }, 99},
	{units.TPOTP50, func(s *stats.Summary) stats.Dist { return s.TPOT }, 50},
	{units.TPOTP99, func(s *stats.Summary) stats.Dist { return s.TPOT }, 99},
	{units.ITLP99, func(s *stats.Summary) stats.Dist { return s.ITL }, 99},
	{units.E2ELP99, func(s *stats.Summary) stats.Dist { return s.E2EL }, 99},
}

// Metrics returns the run's figures by bench unit. A figure the run could
// not measure (no successful request, no server metric) is left out,
// never reported as 0.
func (r *Result) Metrics() map[string]float64 {
	m := map[string]float64{}
	s := r.Summary
	addSummary(m, s)
	for _, name := range r.ClassNames {
		if cs := r.Classes[name]; cs != nil {
			addDists(m, name+"-", cs)
		}
	}
	if s.Completed > 0 {
		if chunks := r.chunks(); chunks > 0 {
			m[units.TokPerChunk] = float64(s.TotalOutputTokens) / float64(chunks)
		}
	}
	if r.Lengths != nil {
		if v, ok := r.Lengths.Mean(r.Load.Measured()); ok {
			m[units.PromptTok] = v
		}
	}
	r.serverMetrics(m)
	r.rampMetrics(m)
	return m
}

// SteadyMetrics returns the figures of Metrics that a window has (the
// latency percentiles, tok/s, req/s, goodput and err-%), computed by the
// same code over the run's steady window (Windows().Steady); nil when the
// run has none (Windows().NoSteady says why). The benchmark metrics carry
// the whole run's (Windows().Carried); these stand beside them, for the
// results folder (docs/load-shapes.md, "Steady-state window").
func (r *Result) SteadyMetrics() map[string]float64 {
	w := r.Windows()
	if w.Steady == nil {
		return nil
	}
	m := map[string]float64{}
	addSummary(m, w.Steady.Summary)
	return m
}

// addSummary adds the figures of one summary, the whole run's or a
// window's: the latency percentiles, the throughputs and the error rate.
func addSummary(m map[string]float64, s *stats.Summary) {
	addDists(m, "", s)
	if s.Completed > 0 {
		m[units.TokPerSec] = s.OutputThroughput
		m[units.ReqPerSec] = s.RequestThroughput
		if s.SLO.Set() {
			m[units.Goodput] = s.RequestGoodput
		}
	}
	if s.Requests > 0 {
		m[units.ErrPct] = 100 * float64(s.Failed) / float64(s.Requests)
	}
}

// rampMetrics adds a ramp-up's two rates (Windows): where its P99s left
// the SLO and where its throughput stopped following the offered rate,
// each left out when the ramp did not get there.
func (r *Result) rampMetrics(m map[string]float64) {
	if r.Point.Load.Ramp == nil || r.Load == nil {
		return
	}
	w := r.Windows()
	if w.SLOExit > 0 {
		m[units.RampSLOExit] = w.SLOExit
	}
	if w.Saturation > 0 {
		m[units.RampSaturation] = w.Saturation
	}
}

func addDists(m map[string]float64, prefix string, s *stats.Summary) {
	for _, u := range distUnits {
		if v, ok := u.dist(s).Pct(u.p); ok {
			m[prefix+u.unit] = v * float64(time.Millisecond)
		}
	}
}

// chunks counts the content chunks of the measured successful requests.
func (r *Result) chunks() int {
	n := 0
	for _, s := range r.Load.Measured() {
		if s.OK() {
			n += len(s.Chunks)
		}
	}
	return n
}

// serverMetrics adds the figures read from /metrics, when available.
func (r *Result) serverMetrics(m map[string]float64) {
	if ts := r.Series; ts != nil {
		if v, err := ts.PeakKVUsage(); err == nil {
			m[units.KVPeakPct] = 100 * v
		}
		if v, err := ts.PeakRunning(); err == nil {
			m[units.RunningPeak] = v
		}
		if v, err := ts.PeakWaiting(); err == nil {
			m[units.WaitingPeak] = v
		}
		if v, err := ts.Jitter(); err == nil {
			m[units.JitterPct] = 100 * v
		}
	}
	d := r.Delta
	if d == nil {
		return
	}
	if hits, q, ok := r.PrefixCache(); ok && q > 0 {
		m[units.PrefixHitPct] = 100 * hits / q
	}
	if v, err := d.Counter(scrape.NumPreemptionsTotal); err == nil {
		m[units.Preemptions] = v
	}
	acc, errA := d.Counter(scrape.SpecDecodeAcceptedTokens)
	drafts, errD := d.Counter(scrape.SpecDecodeDraftTokens)
	if errA == nil && errD == nil && drafts > 0 {
		m[units.SpecAccept] = 100 * acc / drafts
	}
}

// PrefixCache returns the run's prefix-cache hits and queries (tokens),
// ok false when the server does not expose them.
func (r *Result) PrefixCache() (hits, queries float64, ok bool) {
	if r.Delta == nil {
		return 0, 0, false
	}
	h, errH := r.Delta.Counter(scrape.PrefixCacheHitsTotal)
	q, errQ := r.Delta.Counter(scrape.PrefixCacheQueriesTotal)
	return h, q, errH == nil && errQ == nil
}

// ReportMeta describes the run with vLLM's --save-result keys: backend
// "openai-chat" for chat and "vllm" for completions (vLLM's names), and a
// closed loop of N as vLLM's request rate inf with max_concurrency N; and
// with vllmperf's: interrupted, and why the run stopped early.
func (r *Result) ReportMeta() vllmfmt.Meta {
	backend := "openai-chat"
	if r.Endpoint == openai.Completions {
		backend = "vllm"
	}
	cfg := r.Point.Load
	rate, burstiness := cfg.Rate, cfg.Burstiness
	if rate == 0 {
		rate = math.Inf(1)
	}
	if burstiness == 0 {
		burstiness = load.DefaultBurstiness
	}
	var stopped string
	if r.Load.Streak != nil {
		stopped = r.Load.Streak.Error()
	}
	if r.Load.Overload != nil {
		stopped = r.Load.Overload.Error()
	}
	return vllmfmt.Meta{
		Interrupted:    r.Load.Canceled,
		StoppedEarly:   stopped,
		Date:           r.Load.Start,
		Backend:        backend,
		ModelID:        r.Model,
		NumPrompts:     cfg.Requests,
		RequestRate:    rate,
		Burstiness:     burstiness,
		MaxConcurrency: r.Point.Concurrency(),
		Extra:          r.windowFields(r.Windows()),
	}
}
