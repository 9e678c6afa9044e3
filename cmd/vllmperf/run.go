package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/vllmperf/vllmperf/internal/harness"
	"github.com/vllmperf/vllmperf/internal/harness/load"
	"github.com/vllmperf/vllmperf/internal/harness/openai"
	"github.com/vllmperf/vllmperf/internal/harness/profile"
	"github.com/vllmperf/vllmperf/internal/harness/report"
	"github.com/vllmperf/vllmperf/internal/harness/scenario"
	"github.com/vllmperf/vllmperf/internal/harness/server"
	"github.com/vllmperf/vllmperf/internal/harness/stats"
	"github.com/vllmperf/vllmperf/internal/harness/workload"
)

// DefaultAPIKeyEnv is the variable the API key is read from when
// --api-key-env is not given, as vLLM's benchmark clients do.
const DefaultAPIKeyEnv = "OPENAI_API_KEY"

// runOptions are the flags of `vllmperf run`.
type runOptions struct {
	target    string
	model     string
	apiKeyEnv string

	backend string
	profile string
	image   string

	concurrency    int
	rate           string
	burstiness     float64
	maxConcurrency int
	requests       int
	duration       time.Duration
	grace          time.Duration
	warmup         int

	promptTokens int
	sharedPrefix int
	maxTokens    int
	endpoint     string
	seed         uint64

	goodput        []string
	requestTimeout time.Duration
	idleTimeout    time.Duration

	jsonPath       string
	samplesPath    string
	quiet          bool
	sampleInterval time.Duration
}

// inconclusiveError is returned when a run measured nothing that could pass
// or fail (no successful request, say). Outputs are still written.
type inconclusiveError struct{ reason string }

func (e inconclusiveError) Error() string { return "INCONCLUSIVE: " + e.reason }

func newRunCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run one load scenario against a server and print the summary",
		Long: `Run sends streamed requests at a fixed concurrency (closed loop) or at a request
rate (open loop, Poisson or gamma arrivals) and reports TTFT, TPOT, ITL, E2EL,
throughput and goodput exactly as "vllm bench serve" computes them.

The server is --target (any OpenAI-compatible URL), or one this command starts
with --profile: the embedded simulator (--backend sim, the default) or a vLLM
container (--backend container, image from --image or VLLMPERF_IMAGE).`,
		Example: `  vllmperf run --concurrency 8 --requests 200
  vllmperf run --target http://127.0.0.1:8000 --model Qwen/Qwen3-0.6B --rate 4 --burstiness 0.5 --duration 2m --json result.json
  vllmperf run --backend container --profile high-throughput --concurrency 32 --requests 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.target, "target", "", "base URL of a running OpenAI-compatible server (nothing is started); also VLLMPERF_TARGET")
	f.StringVar(&o.model, "model", "", "served model name to request (default: the profile's model, or the target's first /v1/models entry)")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "environment variable holding the API key (default "+DefaultAPIKeyEnv+" when set); the key itself is never a flag")
	f.StringVar(&o.backend, "backend", "", "server to start when --target is not given: sim, container or external (default sim; also VLLMPERF_BACKEND)")
	f.StringVar(&o.profile, "profile", "basic", "server profile: a built-in name (see 'vllmperf profiles') or a YAML file")
	f.StringVar(&o.image, "image", "", "container image (implies --backend container), or \"sim\" for the simulator image (also VLLMPERF_IMAGE)")
	f.IntVar(&o.concurrency, "concurrency", 0, "closed loop: keep N requests in flight")
	f.StringVar(&o.rate, "rate", "", "open loop: requests per second, or \"inf\" to send all at once")
	f.Float64Var(&o.burstiness, "burstiness", 0, "open loop: gamma shape of arrival gaps (default 1: Poisson; <1 burstier, inf constant)")
	f.IntVar(&o.maxConcurrency, "max-concurrency", 0, "open loop: cap on requests in flight (0: none); waiting on it is client queue time")
	f.IntVar(&o.requests, "requests", 0, "measured requests to send (warm-up comes on top)")
	f.DurationVar(&o.duration, "duration", 0, "stop dispatching this long after the measured phase starts")
	f.DurationVar(&o.grace, "grace", 0, "with --duration: how long in-flight requests may finish after the deadline (default "+load.DefaultGrace.String()+")")
	f.IntVar(&o.warmup, "warmup", 1, "warm-up requests sent first, one at a time, excluded from the statistics (the cold first request is reported on its own)")
	f.IntVar(&o.promptTokens, "prompt-tokens", workload.DefaultPromptTokens, "prompt length in tokens (one common English word per token)")
	f.IntVar(&o.sharedPrefix, "shared-prefix-tokens", 0, "length of a system prompt shared by every request (exercises the prefix cache)")
	f.IntVar(&o.maxTokens, "max-tokens", workload.DefaultMaxTokens, "completion tokens per request (sent with ignore_eos, so exactly this many)")
	f.StringVar(&o.endpoint, "endpoint", string(openai.Chat), "API to call: chat (/v1/chat/completions) or completions (/v1/completions)")
	f.Uint64Var(&o.seed, "seed", 0, "seed for prompt words and arrival times")
	f.StringSliceVar(&o.goodput, "goodput", nil, "SLOs for goodput, vLLM style: ttft:MS,tpot:MS,e2el:MS")
	f.DurationVar(&o.requestTimeout, "request-timeout", openai.DefaultRequestTimeout, "deadline of one whole request")
	f.DurationVar(&o.idleTimeout, "idle-timeout", openai.DefaultIdleTimeout, "longest silence allowed inside a stream before the request counts as timed out")
	f.StringVar(&o.jsonPath, "json", "", "write the summary as vLLM --save-result JSON to this file")
	f.StringVar(&o.samplesPath, "samples", "", "write every request's record as JSON lines to this file")
	f.BoolVar(&o.quiet, "quiet", false, "no progress bar on stderr")
	f.DurationVar(&o.sampleInterval, "sample-interval", scenario.DefaultSamplerInterval, "how often /metrics is sampled during the load (running, waiting, KV usage, tokens/s)")
	return cmd
}

// loadConfig checks the load-shape flags and turns them into a load.Config.
func (o *runOptions) loadConfig() (load.Config, error) {
	cfg := load.Config{
		Concurrency:    o.concurrency,
		Burstiness:     o.burstiness,
		MaxConcurrency: o.maxConcurrency,
		Requests:       o.requests,
		Duration:       o.duration,
		Grace:          o.grace,
		Warmup:         o.warmup,
		Seed:           o.seed,
	}
	if o.rate != "" {
		r, err := strconv.ParseFloat(o.rate, 64)
		if err != nil || math.IsNaN(r) || r <= 0 {
			return cfg, usagef("--rate %q: want a positive number of requests per second, or inf", o.rate)
		}
		cfg.Rate = r
	}
	switch {
	case o.concurrency == 0 && cfg.Rate == 0:
		return cfg, usagef("say how to load the server: --concurrency N (closed loop) or --rate R (open loop)")
	case o.concurrency != 0 && cfg.Rate != 0:
		return cfg, usagef("--concurrency and --rate exclude each other: --concurrency is a closed loop, --rate an open loop (cap it with --max-concurrency)")
	case o.concurrency < 0:
		return cfg, usagef("--concurrency %d: want at least 1", o.concurrency)
	case o.requests == 0 && o.duration == 0:
		return cfg, usagef("bound the run: --requests N and/or --duration D")
	case o.requests < 0 || o.duration < 0 || o.warmup < 0 || o.maxConcurrency < 0:
		return cfg, usagef("--requests, --duration, --warmup and --max-concurrency cannot be negative")
	case o.concurrency != 0 && o.maxConcurrency != 0:
		return cfg, usagef("--max-concurrency caps an open loop (--rate); with --concurrency the loop is already capped")
	}
	return cfg, nil
}

// parseGoodput reads vLLM-style SLOs: "ttft:200", "tpot:50", "e2el:2000" (ms).
func parseGoodput(items []string) (stats.SLO, error) {
	var slo stats.SLO
	for _, item := range items {
		for _, kv := range strings.Fields(item) {
			name, val, ok := strings.Cut(kv, ":")
			ms, err := strconv.ParseFloat(val, 64)
			if !ok || err != nil || ms <= 0 || math.IsInf(ms, 0) {
				return slo, usagef("--goodput %q: want NAME:MILLISECONDS with NAME one of ttft, tpot, e2el, e.g. ttft:200", kv)
			}
			d := time.Duration(ms * float64(time.Millisecond))
			switch strings.ToLower(name) {
			case "ttft":
				slo.TTFT = d
			case "tpot":
				slo.TPOT = d
			case "e2el":
				slo.E2EL = d
			default:
				return slo, usagef("--goodput %q: unknown metric %q; use ttft, tpot or e2el", kv, name)
			}
		}
	}
	return slo, nil
}

func (o *runOptions) apiKey() (string, error) {
	if o.apiKeyEnv == "" {
		return os.Getenv(DefaultAPIKeyEnv), nil
	}
	key := os.Getenv(o.apiKeyEnv)
	if key == "" {
		return "", usagef("--api-key-env %s: that variable is empty or unset; export it, or drop the flag for a server without --api-key", o.apiKeyEnv)
	}
	return key, nil
}

// serverOptions resolves the backend from the environment and the flags:
// the environment's options first, the flags' after them (they win).
func (o *runOptions) serverOptions(stderr io.Writer, key string) ([]server.Option, error) {
	opts, err := server.FromEnv()
	if err != nil {
		return nil, usageError{err}
	}
	if o.backend != "" {
		k, err := server.ParseKind(o.backend)
		if err != nil {
			return nil, usageError{fmt.Errorf("--backend: %w", err)}
		}
		opts = append(opts, server.WithBackend(k))
		if o.target != "" && k != server.KindExternal {
			return nil, usagef("--target names a running server, so --backend %s would start nothing: drop one of them", o.backend)
		}
	}
	if o.target != "" {
		opts = append(opts, server.WithBackend(server.KindExternal), server.WithTarget(o.target))
	}
	if o.image != "" {
		opts = append(opts, server.WithImage(o.image))
		if o.backend == "" && o.target == "" {
			opts = append(opts, server.WithBackend(server.KindContainer)) // an image only means something to the container backend
		}
	}
	if o.model != "" {
		opts = append(opts, server.WithModel(o.model)) // the external backend checks the server serves it
	}
	if !o.quiet {
		opts = append(opts, server.WithLog(stderr))
	}
	return append(opts, server.WithAPIKey(key)), nil
}

func (o *runOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	loadCfg, err := o.loadConfig()
	if err != nil {
		return err
	}
	slo, err := parseGoodput(o.goodput)
	if err != nil {
		return err
	}
	key, err := o.apiKey()
	if err != nil {
		return err
	}
	endpoint := openai.Endpoint(o.endpoint)
	if endpoint != openai.Chat && endpoint != openai.Completions {
		return usagef("--endpoint %q: want chat or completions", o.endpoint)
	}
	prof, err := profile.Resolve(o.profile)
	if err != nil {
		return usageError{fmt.Errorf("--profile: %w", err)}
	}
	srvOpts, err := o.serverOptions(stderr, key)
	if err != nil {
		return err
	}
	srv, err := server.Run(ctx, prof, srvOpts...)
	if errors.Is(err, server.ErrSettings) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if cerr := srv.Close(closeCtx); cerr != nil {
			fmt.Fprintln(stderr, "vllmperf: stopping the server:", cerr)
		}
	}()
	model := o.model
	if model == "" {
		model = srv.Model()
	}
	if model == "" {
		return usagef("no model to request: pass --model (the server's served model name)")
	}

	pt, err := o.point(loadCfg)
	if err != nil {
		return usageError{err}
	}
	bar := newProgress(stderr, o.quiet, loadCfg)
	res, err := harness.Run(ctx, srv, pt,
		harness.WithModel(model),
		harness.WithAPIKey(key),
		harness.WithEndpoint(endpoint),
		harness.WithSeed(o.seed),
		harness.WithGoodput(slo),
		harness.WithTimeouts(o.requestTimeout, o.idleTimeout),
		harness.WithProgress(bar.update),
	)
	bar.finish()
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "vllmperf: warning: %v\n", w)
	}
	sum := res.Summary
	if err := report.WriteText(stdout, sum); err != nil {
		return err
	}
	if err := report.WriteServer(stdout, res.Delta, res.Series, res.ScrapeErr); err != nil {
		return err
	}
	if srvReady := srv.ReadyIn(); srvReady > 0 {
		fmt.Fprintf(stdout, "%-40s %.1f\n", "Server time to ready (ms):", float64(srvReady)/float64(time.Millisecond))
	}
	if err := writeFile(o.jsonPath, func(w io.Writer) error { return report.WriteJSON(w, sum, res.ReportMeta()) }); err != nil {
		return err
	}
	if err := writeFile(o.samplesPath, func(w io.Writer) error { return report.WriteSamples(w, res.Samples()) }); err != nil {
		return err
	}
	if res.Load.Canceled {
		return fmt.Errorf("run interrupted after %d requests: partial results above%s", len(res.Samples()), savedNote(o))
	}
	if reason, bad := sum.Inconclusive(); bad {
		return inconclusiveError{reason}
	}
	return nil
}

// point is the run as a scenario point: one class of random-word prompts
// (with an optional shared system prompt) under the flags' load shape.
func (o *runOptions) point(cfg load.Config) (scenario.Point, error) {
	class := workload.Class{Name: "run", Weight: 1, Config: workload.Config{
		PromptTokens:       o.promptTokens,
		MaxTokens:          o.maxTokens,
		IgnoreEOS:          true,
		SharedPrefixTokens: o.sharedPrefix,
	}}
	if o.sampleInterval <= 0 {
		return scenario.Point{}, fmt.Errorf("--sample-interval %s: want a positive duration such as 2s", o.sampleInterval)
	}
	return scenario.Point{Key: "run", Classes: []workload.Class{class}, Load: cfg, SamplerInterval: o.sampleInterval}, nil
}

func savedNote(o *runOptions) string {
	var saved []string
	for _, p := range []string{o.jsonPath, o.samplesPath} {
		if p != "" {
			saved = append(saved, p)
		}
	}
	if len(saved) == 0 {
		return ""
	}
	return " and in " + strings.Join(saved, ", ")
}

// writeFile writes path with fn, unless path is empty.
func writeFile(path string, fn func(io.Writer) error) (err error) {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	if err := fn(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// progress shows how far a run is on stderr: a progress bar on a terminal,
// and a plain line at every tenth of the run (or every 100 requests when
// only --duration bounds it) elsewhere, so CI logs stay readable.
type progress struct {
	bar   *progressbar.ProgressBar
	plain io.Writer
	total int
	next  int
	start time.Time
}

func newProgress(w io.Writer, quiet bool, cfg load.Config) *progress {
	if quiet {
		return &progress{}
	}
	total := cfg.Warmup + cfg.Requests
	if cfg.Requests == 0 {
		total = -1 // a spinner: only the duration bounds the run
	}
	if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{plain: w, total: total, next: plainStep(total), start: time.Now()}
	}
	return &progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("requests"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("req"),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)}
}

// plainStep is how many requests lie between two plain progress lines.
func plainStep(total int) int {
	if total <= 0 {
		return 100
	}
	return max(1, total/10)
}

func (p *progress) update(done, _ int) {
	switch {
	case p.bar != nil:
		_ = p.bar.Set(done)
	case p.plain != nil && done >= p.next:
		if p.total > 0 {
			fmt.Fprintf(p.plain, "vllmperf: %d/%d requests done (%s)\n", done, p.total, time.Since(p.start).Round(100*time.Millisecond))
		} else {
			fmt.Fprintf(p.plain, "vllmperf: %d requests done (%s)\n", done, time.Since(p.start).Round(100*time.Millisecond))
		}
		p.next += plainStep(p.total)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		_ = p.bar.Clear()
	}
}
