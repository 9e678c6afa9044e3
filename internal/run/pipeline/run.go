package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
)

// Defaults of Run's options.
const (
	// DefaultDrainTimeout is how long Run waits after the load for the
	// server's running and waiting gauges to reach 0 before it takes the
	// after snapshot anyway.
	DefaultDrainTimeout = 10 * time.Second
	// drainPoll is how often the gauges are read while draining.
	drainPoll = 50 * time.Millisecond
)

// Option configures Run.
type Option func(*options)

type options struct {
	model          string
	apiKey         string
	endpoint       openai.Endpoint
	seed           uint64
	goodput        stats.SLO
	requestTimeout time.Duration
	idleTimeout    time.Duration
	drainTimeout   time.Duration
	progress       func(done, total int)
	noMetrics      bool
	maxEventSize   int
	scrapeTimeout  time.Duration
	torchProfile   *torchprof.Settings
	percentiles    []float64 // WithPercentiles
	lora           []string  // WithLoRAModules (lora.go)
	noOverloadStop bool
}

// WithModel requests model instead of the server's served name.
func WithModel(model string) Option { return func(o *options) { o.model = model } }

// WithAPIKey sends key as the bearer token, to the API and to /metrics.
func WithAPIKey(key string) Option { return func(o *options) { o.apiKey = key } }

// WithEndpoint selects the chat (default) or completions API.
func WithEndpoint(e openai.Endpoint) Option { return func(o *options) { o.endpoint = e } }

// WithSeed makes prompt words and arrival times reproducible.
func WithSeed(seed uint64) Option { return func(o *options) { o.seed = seed } }

// WithGoodput sets the per-request SLO of the goodput figure.
func WithGoodput(slo stats.SLO) Option { return func(o *options) { o.goodput = slo } }

// WithTimeouts bounds each request and each silence inside a stream
// (openai.DefaultRequestTimeout and DefaultIdleTimeout when not given).
func WithTimeouts(request, idle time.Duration) Option {
	return func(o *options) { o.requestTimeout, o.idleTimeout = request, idle }
}

// WithMaxEventSize caps one line of a response stream (see
// openai.WithMaxEventSize; openai.DefaultMaxEventSize when not given, and
// n <= 0 removes the cap).
func WithMaxEventSize(n int) Option { return func(o *options) { o.maxEventSize = n } }

// WithScrapeTimeout bounds each /metrics scrape (scrape.DefaultTimeout when
// not given): a scrape past it fails, naming the URL and the timeout.
func WithScrapeTimeout(d time.Duration) Option { return func(o *options) { o.scrapeTimeout = d } }

// WithDrainTimeout bounds the wait for the queues to empty after the load
// (DefaultDrainTimeout when not given).
func WithDrainTimeout(d time.Duration) Option { return func(o *options) { o.drainTimeout = d } }

// WithProgress is called after each request ends (see load.Config.Progress).
func WithProgress(f func(done, total int)) Option { return func(o *options) { o.progress = f } }

// WithoutMetrics skips /metrics entirely, for servers that expose none; the
// result then has no server-side figures and its checks say so.
func WithoutMetrics() Option { return func(o *options) { o.noMetrics = true } }

// Run runs point p against srv and returns what it measured. See the
// package documentation for the steps.
func Run(ctx context.Context, srv server.Server, p scenario.Point, opts ...Option) (*result.Result, error) {
	o := options{drainTimeout: DefaultDrainTimeout, requestTimeout: openai.DefaultRequestTimeout, idleTimeout: openai.DefaultIdleTimeout,
		maxEventSize: openai.DefaultMaxEventSize, scrapeTimeout: scrape.DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	model := o.model
	if model == "" {
		model = srv.Model()
	}
	if model == "" {
		return nil, errors.New("harness: no model to request: the server reported none; pass the served model name")
	}
	client, hc := newClient(srv, p, o)
	defer client.CloseIdleConnections()
	res := &result.Result{Point: p, Model: model, Endpoint: o.endpoint}
	mix, cfg, next, err := prepare(ctx, res, client, p, o)
	if err != nil {
		return nil, err
	}
	if err := checkAdapters(ctx, client, o.lora); err != nil {
		return nil, err
	}
	next = withAdapters(next, o.lora, o.seed)
	prof, err := profiler(ctx, srv, o)
	if err != nil {
		return nil, err
	}
	if n := p.Concurrency(); n > 0 {
		if err := client.Preconnect(ctx, n); err != nil {
			res.Warnings = append(res.Warnings, fmt.Errorf("%w: the first requests paid connection set-up", err))
		}
	}

	var scraper scrape.Source
	var sampler *scrape.Sampler
	if !o.noMetrics {
		var label string
		scraper, label = metricsSource(srv, o, hc)
		res.Before, res.ScrapeErr = scraper.Scrape(ctx)
		res.Warnings = append(res.Warnings, modelWarnings(res.Before, label)...)
		sampler = scrape.NewSampler(scraper, scrape.WithInterval(p.SamplerInterval))
		if err := sampler.Start(ctx); err != nil {
			res.Warnings = append(res.Warnings, fmt.Errorf("metrics sampler: %w", err))
			sampler = nil
		}
	}

	endProfile := startProfile(ctx, prof, p, o, scraper, &cfg)
	lr, err := load.Run(ctx, cfg, client, next)
	endProfile(res)
	if sampler != nil {
		res.Series = sampler.Stop()
	}
	if err != nil {
		return nil, fmt.Errorf("harness: %s: %w", p.Key, err)
	}
	res.Load = lr
	probe(ctx, res, srv)

	if scraper != nil {
		drain(ctx, res, scraper, o.drainTimeout)
	}
	if err := summarize(res, mix, cfg.Turns, p.Classes, stats.Options{SLO: o.goodput, Percentiles: o.percentiles}); err != nil {
		return nil, err
	}
	if err := summarizeAdapters(res, o.lora, o.seed, o.goodput); err != nil {
		return nil, err
	}
	checkServedAdapters(res, o.lora, o.seed)
	summarizeReasoning(res)
	reconcileEmbeddings(res)
	settleLengths(res, mix)
	return res, nil
}

// prepare builds the point's requests for res.Model: the mix (synthetic
// prompts rebuilt to the served model's tokens a word when /tokenize says
// they are not one), the load's configuration and the function that
// builds request i; it measures the prompts on /tokenize and refuses a
// point whose longest request does not fit the server's context.
func prepare(ctx context.Context, res *result.Result, client *openai.Client, p scenario.Point, o options) (*workload.Mix, load.Config, func(int) openai.Request, error) {
	classes := p.Classes
	costs, tokenize, err := probeWordTokens(ctx, client, res.Model)
	if err != nil {
		res.Warnings = append(res.Warnings, fmt.Errorf("prompt lengths: the vocabulary's tokens on the served model were not measured: %w", err))
	}
	if costs != nil {
		classes = withWordTokens(classes, costs)
	}
	mix, err := newMix(res.Model, classes, o)
	if err != nil {
		return nil, load.Config{}, nil, fmt.Errorf("harness: %s: %w", p.Key, err)
	}
	res.ClassNames = mix.Classes()
	res.Lengths = newLengths(mix, tokenize, costs != nil)
	cfg := p.Load
	cfg.Seed, cfg.Progress, cfg.Overload = o.seed, o.progress, o.overloadRule(cfg)
	if t := mix.Turns(); t > 1 {
		cfg.Turns = t // live conversations: the load generator carries the replies
		res.ClassNames = turnNames(t)
	}
	next := requestOrder(mix, cfg)
	// A request too long by its words alone (a lower bound of its tokens)
	// is refused before any prompt is sent to /tokenize.
	if ce := tooLongByWords(ctx, client, res.Model, p, mix); ce != nil {
		return nil, load.Config{}, nil, ce
	}
	if tokenize && !withImages(classes) {
		measureLengths(ctx, res, client, mix, cfg, next)
	}
	if err := fitsContext(ctx, client, res.Model, p, longest(res, mix, next)); err != nil {
		var ce *ContextError
		if errors.As(err, &ce) || errors.Is(err, openai.ErrKeyRejected) {
			return nil, load.Config{}, nil, err
		}
		res.Warnings = append(res.Warnings, err)
	}
	return mix, cfg, next, nil
}

// newMix builds the point's workload for model.
func newMix(model string, classes []workload.Class, o options) (*workload.Mix, error) {
	cs := make([]workload.Class, len(classes))
	copy(cs, classes)
	for i := range cs {
		cs[i].Config.Endpoint = o.endpoint
	}
	return workload.NewMix(model, o.seed, 0, cs)
}

// requestOrder is the function that builds request i. A trace's measured
// request k is its entry k, the one its arrival belongs to; its warm-up
// requests send the entries of a second pass over the trace (other
// prefixes: the measured ones gain nothing from them).
func requestOrder(mix *workload.Mix, cfg load.Config) func(int) openai.Request {
	if cfg.Arrivals == nil || cfg.Warmup == 0 {
		return mix.Next
	}
	n, w := len(cfg.Arrivals), cfg.Warmup
	return func(i int) openai.Request {
		if i < w {
			return mix.Next(n + i)
		}
		return mix.Next(i - w)
	}
}

// newClient builds the run's client, sized for the point's concurrency,
// and returns it with its HTTP client: the run's one transport, built by
// the server's gateway (server.GatewayOf: headers, TLS, the proxy rule),
// which the scrapes share.
func newClient(srv server.Server, p scenario.Point, o options) (*openai.Client, *http.Client) {
	conns := openai.DefaultMaxConnections
	if n := p.Concurrency(); n > 0 {
		conns = n
	}
	hc := server.GatewayOf(srv).Client(conns + 1) // +1: the scrapes' connection
	opts := []openai.Option{openai.WithRequestTimeout(o.requestTimeout), openai.WithIdleTimeout(o.idleTimeout), openai.WithMaxEventSize(o.maxEventSize),
		openai.WithMaxConnections(conns), openai.WithHTTPClient(hc), openai.WithFamily(server.FamilyOf(srv))}
	if o.apiKey != "" {
		opts = append(opts, openai.WithAPIKey(o.apiKey))
	}
	return openai.New(srv.BaseURL(), opts...), hc
}

// probe checks the server still serves when requests failed (not those
// cut by an interruption): a server that died mid-run is named as such,
// with its last logs, instead of leaving only failed requests.
func probe(ctx context.Context, r *result.Result, srv server.Server) {
	if ctx.Err() != nil {
		return
	}
	for _, s := range r.Load.Samples {
		if !s.OK() && s.Err.Kind != sample.ErrCanceled {
			if err := server.Probe(ctx, srv); errors.Is(err, server.ErrServerDown) {
				r.ServerDown = err
			}
			return
		}
	}
}

// drain polls /metrics until running and waiting are 0 and the server has
// counted the completed requests (counted), or the timeout passes; the
// last snapshot is the run's after snapshot.
func drain(ctx context.Context, r *result.Result, s scrape.Source, timeout time.Duration) {
	start := time.Now()
	deadline := start.Add(timeout)
	for {
		snap, err := s.Scrape(ctx)
		if err != nil {
			r.ScrapeErr = errors.Join(r.ScrapeErr, fmt.Errorf("after the run: %w", err))
			return
		}
		r.After = snap
		running, errR := snap.Gauge(scrape.NumRequestsRunning)
		waiting, errW := snap.Gauge(scrape.NumRequestsWaiting)
		if errR != nil || errW != nil {
			break // the drain check reports the missing gauge by name
		}
		if running == 0 && waiting == 0 {
			r.Drained = true
			if counted(r, snap) {
				break
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(drainPoll)
	}
	r.DrainWait = time.Since(start)
	if r.Before != nil && r.After != nil {
		r.Delta, r.ScrapeErr = scrape.Diff(r.Before, r.After)
	}
	severalServers(ctx, r, s)
}

// counted reports whether the server's request_success_total has moved by
// at least the requests the client saw complete since the run's first
// snapshot. Servers may count a request after its response has ended
// (llm-d-inference-sim updates its counters asynchronously), so the drain
// waits for it, up to its timeout, before the counters are compared: a
// server that never counts them still fails the reconciliation. Without
// that counter, or without a first snapshot, there is nothing to wait for.
func counted(r *result.Result, after *scrape.Snapshot) bool {
	if r.Before == nil || r.Load == nil {
		return true
	}
	d, err := scrape.Diff(r.Before, after)
	if err != nil {
		return true // a reset: the reconciliation says so
	}
	v, err := d.Counter(scrape.RequestSuccessTotal)
	if err != nil {
		return true
	}
	completed := 0
	for _, s := range r.Load.Samples {
		if s.OK() {
			completed++
		}
	}
	return v >= float64(completed)
}

// summarize computes the statistics, per class too when there are several.
// A class sent with ignore_eos promises exactly its max_tokens: short
// outputs are counted and warned about (stats.Options.ExpectedOutputTokens).
func summarize(r *result.Result, mix *workload.Mix, turns int, classes []workload.Class, base stats.Options) error {
	lr := r.Load
	expected := map[string]int{}
	for _, c := range classes {
		if c.Dataset == nil && !r.Endpoint.Unstreamed() { // a data set's output lengths vary by request; an embedding or a rerank has none
			expected[c.Name] = promisedTokens(c.Config)
		}
	}
	whole := 0
	if len(classes) == 1 {
		whole = expected[classes[0].Name]
	}
	classOf := mix.ClassOf
	if turns > 1 { // one summary per turn: later turns should hit the prefix cache
		classOf = func(i int) string { return turnNames(turns)[i%turns] }
		for _, name := range r.ClassNames {
			expected[name] = whole
		}
	}
	sum, err := stats.SummarizeWith(lr.Samples, lr.Start, lr.End, withExpected(base, whole))
	if err != nil {
		return fmt.Errorf("harness: %w", err)
	}
	r.Summary = sum
	if len(r.ClassNames) < 2 {
		return nil
	}
	r.Classes = map[string]*stats.Summary{}
	for _, name := range r.ClassNames {
		var own []sample.Sample
		for _, s := range lr.Samples {
			if classOf(s.Index) == name {
				own = append(own, s)
			}
		}
		cs, err := stats.SummarizeWith(own, lr.Start, lr.End, withExpected(base, expected[name]))
		if err != nil {
			return fmt.Errorf("harness: class %s: %w", name, err)
		}
		r.Classes[name] = cs
	}
	return nil
}

// turnNames name a conversation's turns as classes: turn1, turn2, ….
func turnNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("turn%d", i+1)
	}
	return out
}

// promisedTokens is how many completion tokens a request of cfg must
// return: its max_tokens when sent with ignore_eos, else 0 (unknown: the
// model may stop early).
func promisedTokens(cfg workload.Config) int {
	if !cfg.IgnoreEOS {
		return 0
	}
	if cfg.MaxTokens == 0 {
		return workload.DefaultMaxTokens
	}
	return cfg.MaxTokens
}
