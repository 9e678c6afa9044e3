package scrape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// DefaultInterval is how often a Sampler scrapes: every 2 s, as the seed
// article's watch loop does. Shorter windows make tokens/s noisier (a window
// holds few engine steps); longer ones hide stalls.
const DefaultInterval = 2 * time.Second

// MinInterval is the shortest time between scrapes a run may ask for:
// vLLM's /metrics page takes milliseconds to render, and a tighter loop
// only loads the server being measured.
const MinInterval = 100 * time.Millisecond

// Sampler scrapes a Source at a fixed interval while load runs and records
// a TimeSeries: running and waiting requests, KV-cache usage, and per window
// generation and prompt tokens/s and preemptions. Start and Stop may be
// called from any goroutine; Stop leaves no goroutine behind.
type Sampler struct {
	src      Source
	interval time.Duration

	mu      sync.Mutex
	started bool
	parent  context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	result  *TimeSeries

	// Owned by the sampling goroutine until done closes, then by Stop.
	series TimeSeries
	prev   *Snapshot
}

// SamplerOption configures a Sampler.
type SamplerOption func(*Sampler)

// WithInterval sets the time between scrapes (default DefaultInterval);
// d <= 0 keeps the default.
func WithInterval(d time.Duration) SamplerOption {
	return func(s *Sampler) {
		if d > 0 {
			s.interval = d
		}
	}
}

// NewSampler returns a sampler of src; nothing runs until Start.
func NewSampler(src Source, opts ...SamplerOption) *Sampler {
	s := &Sampler{src: src, interval: DefaultInterval}
	for _, o := range opts {
		o(s)
	}
	s.series.Interval = s.interval
	if sc, ok := src.(*Scraper); ok {
		s.series.Source = sc.URL()
	}
	return s
}

// Start takes the first scrape (the baseline of the first window) at once,
// then one every interval until Stop or until ctx ends. It fails if the
// sampler was started before.
func (s *Sampler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("sampler already started: use a new Sampler for each run")
	}
	s.started = true
	s.parent = ctx
	loopCtx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	s.done = make(chan struct{})
	go s.loop(loopCtx)
	return nil
}

// Stop ends the sampling, takes one last scrape (so the final window and
// the end state are kept; bounded by the scraper's timeout and skipped when
// Start's context has ended) and returns the series. Further calls return
// the same series; Stop without Start returns an empty one.
func (s *Sampler) Stop() *TimeSeries {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.result != nil {
		return s.result
	}
	if s.started {
		s.cancel()
		<-s.done
		if s.parent.Err() == nil {
			s.sample(s.parent)
		}
	}
	out := s.series
	s.result = &out
	return s.result
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	s.sample(ctx)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sample(ctx)
		}
	}
}

// sample scrapes once and appends a point (or the error).
func (s *Sampler) sample(ctx context.Context) {
	snap, err := s.src.Scrape(ctx)
	if err != nil {
		if ctx.Err() == nil { // not our own Stop cutting the scrape short
			s.series.Errors = append(s.series.Errors, err)
		}
		return
	}
	if s.series.Source == "" {
		s.series.Source, s.series.fam = snap.Source, snap.fam
	}
	p := Point{At: snap.ScrapedAt}
	for _, g := range []struct {
		name string
		dst  *float64
	}{
		{NumRequestsRunning, &p.Running},
		{NumRequestsWaiting, &p.Waiting},
		{KVCacheUsagePerc, &p.KVUsage},
	} {
		v, err := snap.Gauge(g.name)
		if err != nil {
			p.Missing = append(p.Missing, g.name)
		}
		*g.dst = v
	}
	if s.prev != nil {
		p.Window = snap.ScrapedAt.Sub(s.prev.ScrapedAt)
		s.windowRates(&p, s.prev, snap)
	}
	s.prev = snap
	s.series.Points = append(s.series.Points, p)
}

// windowRates fills the point's per-window figures from two snapshots.
func (s *Sampler) windowRates(p *Point, prev, cur *Snapshot) {
	counters := []struct {
		name string
		dst  *float64
		rate bool
	}{
		{GenerationTokensTotal, &p.GenerationTokensPerSec, true},
		{PromptTokensTotal, &p.PromptTokensPerSec, true},
		{NumPreemptionsTotal, &p.Preemptions, false},
	}
	d, err := Diff(prev, cur)
	var re *ResetError
	if errors.As(err, &re) {
		s.series.Resets = append(s.series.Resets, re.Resets...)
	}
	for _, c := range counters {
		if err != nil || p.Window <= 0 {
			p.Missing = append(p.Missing, c.name)
			continue
		}
		v, cerr := d.Counter(c.name)
		if cerr != nil {
			p.Missing = append(p.Missing, c.name)
			continue
		}
		if c.rate {
			v /= p.Window.Seconds()
		}
		*c.dst = v
	}
}

// Point is one scrape of a TimeSeries. Gauges are as scraped; the per-window
// figures cover the time since the previous point (Window) and are zero on
// the first point, whose Window is 0.
type Point struct {
	At     time.Time     `json:"at"`
	Window time.Duration `json:"window_ns"`

	Running float64 `json:"num_requests_running"`
	Waiting float64 `json:"num_requests_waiting"`
	KVUsage float64 `json:"kv_cache_usage_perc"` // 0–1

	GenerationTokensPerSec float64 `json:"generation_tokens_per_s"`
	PromptTokensPerSec     float64 `json:"prompt_tokens_per_s"`
	Preemptions            float64 `json:"num_preemptions"` // in this window

	// Missing names the figures this point lacks (canonical metric names):
	// the exposition did not have them, or a counter reset in the window.
	Missing []string `json:"missing,omitempty"`
}

func (p Point) has(name string) bool {
	for _, m := range p.Missing {
		if m == name {
			return false
		}
	}
	return true
}

// TimeSeries is what a Sampler recorded.
type TimeSeries struct {
	Source   string
	Interval time.Duration
	Points   []Point
	// Errors are the scrapes that failed (*FetchError, *ParseError); the
	// window after one spans the gap.
	Errors []error
	// Resets are counter resets seen between points (a server restart).
	Resets []Reset

	fam *serverfamily.Family // whose names the scrapes used; nil: serverfamily.Default
}

// ErrTooFewWindows is wrapped by Jitter when the series has fewer than two
// full windows: the run was shorter than about two intervals.
var ErrTooFewWindows = errors.New("too few sampling windows")

// Jitter returns the coefficient of variation (population standard
// deviation / mean, as numpy's std) of the generation tokens/s of the full
// windows: those at least half an interval long with a valid rate. 0 means
// perfectly steady output; 0.1 means windows typically 10 % off the mean.
func (ts *TimeSeries) Jitter() (float64, error) {
	var rates []float64
	for _, p := range ts.Points {
		if p.Window >= ts.Interval/2 && p.Window > 0 && p.has(GenerationTokensTotal) {
			rates = append(rates, p.GenerationTokensPerSec)
		}
	}
	if len(rates) < 2 {
		return 0, fmt.Errorf("jitter of generation tokens/s needs at least 2 full windows of %v; got %d from %d scrapes: %w",
			ts.Interval, len(rates), len(ts.Points), ErrTooFewWindows)
	}
	var sum float64
	for _, r := range rates {
		sum += r
	}
	mean := sum / float64(len(rates))
	if mean <= 0 {
		return 0, fmt.Errorf("jitter of generation tokens/s: no tokens generated in %d windows", len(rates))
	}
	var ss float64
	for _, r := range rates {
		ss += (r - mean) * (r - mean)
	}
	return math.Sqrt(ss/float64(len(rates))) / mean, nil
}

// PeakRunning is the highest num_requests_running scraped.
func (ts *TimeSeries) PeakRunning() (float64, error) {
	return ts.peak(NumRequestsRunning, func(p Point) float64 { return p.Running })
}

// PeakWaiting is the highest num_requests_waiting scraped.
func (ts *TimeSeries) PeakWaiting() (float64, error) {
	return ts.peak(NumRequestsWaiting, func(p Point) float64 { return p.Waiting })
}

// WaitingAtPeakRunning is the highest num_requests_waiting scraped at an
// instant when num_requests_running was at its peak: requests queued
// while the server ran all it would, the sign of a cap (max-num-seqs).
func (ts *TimeSeries) WaitingAtPeakRunning() (float64, error) {
	peak, err := ts.PeakRunning()
	if err != nil {
		return 0, err
	}
	if _, err := ts.PeakWaiting(); err != nil {
		return 0, err
	}
	best := 0.0
	for _, p := range ts.Points {
		if p.has(NumRequestsRunning) && p.has(NumRequestsWaiting) && p.Running == peak {
			best = max(best, p.Waiting)
		}
	}
	return best, nil
}

// PeakKVUsage is the highest kv_cache_usage_perc scraped (0–1).
func (ts *TimeSeries) PeakKVUsage() (float64, error) {
	return ts.peak(KVCacheUsagePerc, func(p Point) float64 { return p.KVUsage })
}

// Preemptions is the number of preemptions over the valid windows.
func (ts *TimeSeries) Preemptions() (float64, error) {
	var sum float64
	n := 0
	for _, p := range ts.Points {
		if p.Window > 0 && p.has(NumPreemptionsTotal) {
			sum += p.Preemptions
			n++
		}
	}
	if n == 0 {
		return 0, ts.notAvailable(NumPreemptionsTotal)
	}
	return sum, nil
}

func (ts *TimeSeries) peak(name string, get func(Point) float64) (float64, error) {
	best, found := 0.0, false
	for _, p := range ts.Points {
		if p.has(name) && (!found || get(p) > best) {
			best, found = get(p), true
		}
	}
	if !found {
		return 0, ts.notAvailable(name)
	}
	return best, nil
}

// notAvailable explains why no point carries the figure.
func (ts *TimeSeries) notAvailable(name string) error {
	reason := fmt.Sprintf("none of the %d scrapes during the run had it", len(ts.Points))
	switch {
	case len(ts.Points) == 0 && len(ts.Errors) > 0:
		reason = fmt.Sprintf("no scrape during the run succeeded (%d failed; first: %v)", len(ts.Errors), ts.Errors[0])
	case len(ts.Points) == 0:
		reason = "the sampler took no scrape"
	case len(ts.Resets) > 0:
		reason += fmt.Sprintf(" (%d counter resets)", len(ts.Resets))
	}
	return &NotAvailableError{Metric: name, Source: ts.Source, Reason: reason, fam: ts.fam}
}

// SeriesSummary holds the figures derived from a TimeSeries; a nil figure
// is not available, and Unavailable says why.
type SeriesSummary struct {
	Points      int               `json:"points"`
	ScrapeErrs  int               `json:"scrape_errors"`
	Resets      int               `json:"resets"`
	PeakRunning *float64          `json:"peak_num_requests_running"`
	PeakWaiting *float64          `json:"peak_num_requests_waiting"`
	PeakKVUsage *float64          `json:"peak_kv_cache_usage_perc"`
	Preemptions *float64          `json:"num_preemptions"`
	JitterCV    *float64          `json:"generation_throughput_cv"`
	Unavailable map[string]string `json:"unavailable,omitempty"`
}

// Summary computes every derived figure at once.
func (ts *TimeSeries) Summary() SeriesSummary {
	sum := SeriesSummary{Points: len(ts.Points), ScrapeErrs: len(ts.Errors), Resets: len(ts.Resets), Unavailable: map[string]string{}}
	for _, f := range []struct {
		key string
		dst **float64
		get func() (float64, error)
	}{
		{"peak_num_requests_running", &sum.PeakRunning, ts.PeakRunning},
		{"peak_num_requests_waiting", &sum.PeakWaiting, ts.PeakWaiting},
		{"peak_kv_cache_usage_perc", &sum.PeakKVUsage, ts.PeakKVUsage},
		{"num_preemptions", &sum.Preemptions, ts.Preemptions},
		{"generation_throughput_cv", &sum.JitterCV, ts.Jitter},
	} {
		v, err := f.get()
		if err != nil {
			sum.Unavailable[f.key] = err.Error()
			continue
		}
		*f.dst = &v
	}
	if len(sum.Unavailable) == 0 {
		sum.Unavailable = nil
	}
	return sum
}

// MarshalJSON writes the series with its errors as text and its Summary.
func (ts *TimeSeries) MarshalJSON() ([]byte, error) {
	errs := make([]string, len(ts.Errors))
	for i, e := range ts.Errors {
		errs[i] = e.Error()
	}
	return json.Marshal(struct {
		Source   string        `json:"source"`
		Interval time.Duration `json:"interval_ns"`
		Summary  SeriesSummary `json:"summary"`
		Points   []Point       `json:"points"`
		Errors   []string      `json:"errors,omitempty"`
		Resets   []Reset       `json:"resets,omitempty"`
	}{ts.Source, ts.Interval, ts.Summary(), ts.Points, errs, ts.Resets})
}
