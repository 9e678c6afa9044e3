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

	dockerunits "github.com/docker/go-units"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/harness"
	"github.com/vllmperf/vllmperf/internal/harness/check"
	"github.com/vllmperf/vllmperf/internal/harness/load"
	"github.com/vllmperf/vllmperf/internal/harness/openai"
	"github.com/vllmperf/vllmperf/internal/harness/profile"
	"github.com/vllmperf/vllmperf/internal/harness/sample"
	"github.com/vllmperf/vllmperf/internal/harness/scenario"
	"github.com/vllmperf/vllmperf/internal/harness/server"
	"github.com/vllmperf/vllmperf/internal/harness/stats"
	"github.com/vllmperf/vllmperf/internal/harness/vllmfmt"
	"github.com/vllmperf/vllmperf/internal/harness/workload"
	"github.com/vllmperf/vllmperf/internal/progress"
)

// DefaultAPIKeyEnv is the variable the API key is read from when
// --api-key-env is not given, as vLLM's benchmark clients do.
const DefaultAPIKeyEnv = "OPENAI_API_KEY"

// runOptions are the flags of `vllmperf run`.
type runOptions struct {
	target    string
	model     string
	apiKeyEnv string
	waitReady time.Duration

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
	data         datasetFlags

	goodput                []string
	requestTimeout         time.Duration
	idleTimeout            time.Duration
	maxEventSize           string
	maxFailureRate         string
	maxConsecutiveFailures int

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
container (--backend container, image from --image or VLLMPERF_IMAGE).

The output files (--json, --samples) are checked before any request is sent
and written, each on its own, before the summary goes to stdout. The run fails
(exit 1) when more requests fail than --max-failure-rate allows, when it stops
early on --max-consecutive-failures identical failures, or when the server goes
down; it is INCONCLUSIVE (exit 3) when no request succeeded; SIGINT or SIGTERM
stop it with partial results (exit 130 or 143).`,
		Example: `  vllmperf run --concurrency 8 --requests 200
  vllmperf run --target http://127.0.0.1:8000 --model Qwen/Qwen3-0.6B --rate 4 --burstiness 0.5 --duration 2m --json result.json
  vllmperf run --backend container --profile high-throughput --concurrency 32 --requests 500`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.Flags(), stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.target, "target", "", "base URL of a running OpenAI-compatible server, e.g. http://127.0.0.1:8000 (nothing is started; a URL with /v1/... is cut back to it)")
	f.StringVar(&o.model, "model", "", "served model name to request (default: the profile's model, or the target's first /v1/models entry)")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "environment variable holding the API key (default "+DefaultAPIKeyEnv+" when set); the key itself is never a flag")
	f.DurationVar(&o.waitReady, "wait-ready", 0, "with --target: wait up to this long for /health to answer 200, for a server that is still starting (0: check once)")
	f.StringVar(&o.backend, "backend", "", "server to start when --target is not given: sim, container or external (default sim; also VLLMPERF_BACKEND)")
	f.StringVar(&o.profile, "profile", "basic", "server profile: a built-in name (see 'vllmperf profiles') or a YAML file; not with --target")
	f.StringVar(&o.image, "image", "", "container image (implies --backend container), or \"sim\" for the simulator image (also VLLMPERF_IMAGE); not with --target")
	f.IntVar(&o.concurrency, "concurrency", 0, "closed loop: keep N requests in flight (N ≥ 1)")
	f.StringVar(&o.rate, "rate", "", "open loop: requests per second (> 0), or \"inf\" to send all at once")
	f.Float64Var(&o.burstiness, "burstiness", load.DefaultBurstiness, "open loop: gamma shape of arrival gaps, > 0 (1: Poisson; <1 burstier; inf: constant rate)")
	f.IntVar(&o.maxConcurrency, "max-concurrency", 0, "open loop: cap on requests in flight (0: no cap); waiting on it is client queue time")
	f.IntVar(&o.requests, "requests", 0, "measured requests to send, ≥ 1 (warm-up comes on top)")
	f.DurationVar(&o.duration, "duration", 0, "stop dispatching this long after the measured phase starts (> 0)")
	f.DurationVar(&o.grace, "grace", load.DefaultGrace, "with --duration: how long in-flight requests may finish after the deadline (> 0)")
	f.IntVar(&o.warmup, "warmup", 1, "warm-up requests sent first, one at a time, excluded from the statistics (≥ 0; the cold first request is reported on its own)")
	f.IntVar(&o.promptTokens, "prompt-tokens", workload.DefaultPromptTokens, fmt.Sprintf("prompt length in tokens, ≥ %d (one common English word per token)", workload.UniqueWords))
	f.IntVar(&o.sharedPrefix, "shared-prefix-tokens", 0, fmt.Sprintf("length of a system prompt shared by every request (0: none, else ≥ %d; exercises the prefix cache)", workload.NonceWords))
	f.IntVar(&o.maxTokens, "max-tokens", workload.DefaultMaxTokens, "completion tokens per request, ≥ 1 (sent with ignore_eos, so exactly this many; fewer are warned about)")
	f.StringVar(&o.endpoint, "endpoint", string(openai.Chat), "API to call: chat (/v1/chat/completions) or completions (/v1/completions)")
	f.Uint64Var(&o.seed, "seed", 0, "seed for prompt words and arrival times")
	f.StringSliceVar(&o.goodput, "goodput", nil, "SLOs for goodput, vLLM style: ttft:MS,tpot:MS,e2el:MS")
	f.DurationVar(&o.requestTimeout, "request-timeout", openai.DefaultRequestTimeout, "deadline of one whole request (0: none)")
	f.DurationVar(&o.idleTimeout, "idle-timeout", openai.DefaultIdleTimeout, "longest silence allowed inside a stream before the request counts as timed out (0: none)")
	f.StringVar(&o.maxEventSize, "max-event-size", dockerunits.BytesSize(openai.DefaultMaxEventSize), "largest SSE line accepted; a longer one fails the request as a protocol error (0: no cap, memory then grows with what the server sends)")
	f.StringVar(&o.maxFailureRate, "max-failure-rate", "0", "fail the run (exit 1) when a larger share of the measured requests fails: a fraction (0.05) or a percentage (5%)")
	f.IntVar(&o.maxConsecutiveFailures, "max-consecutive-failures", load.DefaultMaxConsecutiveFailures, "stop the run after this many requests in a row fail the same way (0: never stop early)")
	f.StringVar(&o.jsonPath, "json", "", "write the summary as vLLM --save-result JSON to this file")
	f.StringVar(&o.samplesPath, "samples", "", "write every request's record as JSON lines to this file")
	f.BoolVar(&o.quiet, "quiet", false, "no progress bar on stderr")
	f.DurationVar(&o.sampleInterval, "sample-interval", scenario.DefaultSamplerInterval, "how often /metrics is sampled during the load (running, waiting, KV usage, tokens/s)")
	o.data.register(f)
	return cmd
}

// noArgs refuses positional arguments as a usage error (exit 2), with the
// flag the argument probably belongs to.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	hint := fmt.Sprintf("see '%s --help'", cmd.CommandPath())
	if strings.Contains(args[0], "://") || strings.Contains(args[0], ":") {
		hint = "a server's URL goes after --target"
	}
	return usagef("unexpected argument %q: %s takes flags only (%s)", args[0], cmd.CommandPath(), hint)
}

// runInput is what the flags ask for, checked.
type runInput struct {
	load           load.Config
	class          workload.Class
	slo            stats.SLO
	endpoint       openai.Endpoint
	profile        profile.Profile
	target         string // the base URL derived from --target ("" without it)
	maxEventSize   int
	maxFailureRate float64
}

// parse checks every flag and returns the run they describe; its errors
// are usage errors that name the flag given.
func (o *runOptions) parse(flags *pflag.FlagSet, stderr io.Writer) (*runInput, error) {
	in := &runInput{}
	var err error
	if in.load, err = o.loadConfig(flags); err != nil {
		return nil, err
	}
	if in.class, err = o.class(flags, &in.load); err != nil {
		return nil, err
	}
	if err := o.checkSizes(flags); err != nil {
		return nil, err
	}
	if in.slo, err = stats.ParseSLO(o.goodput); err != nil {
		return nil, usageError{fmt.Errorf("--goodput %w", err)}
	}
	in.endpoint = openai.Endpoint(o.endpoint)
	if in.endpoint != openai.Chat && in.endpoint != openai.Completions {
		return nil, usagef("--endpoint %q: want chat or completions", o.endpoint)
	}
	if in.maxEventSize, err = parseSize("--max-event-size", o.maxEventSize); err != nil {
		return nil, err
	}
	if in.maxFailureRate, err = parseRate("--max-failure-rate", o.maxFailureRate); err != nil {
		return nil, err
	}
	if err := o.checkBackendFlags(flags); err != nil {
		return nil, err
	}
	if o.target != "" {
		base, cut, err := server.ParseTarget(o.target)
		if err != nil {
			return nil, usageError{fmt.Errorf("--target: %w", err)}
		}
		if cut {
			fmt.Fprintf(stderr, "vllmperf: --target %s: using the server's base URL %s (vllmperf adds the API paths)\n", o.target, base)
		}
		in.target = base
	}
	if o.externalSource() != "" {
		// A running deployment: its flags are its own, no profile applies.
		in.profile = profile.Deployment("")
		return in, nil
	}
	if in.profile, err = profile.Resolve(o.profile); err != nil {
		return nil, usageError{fmt.Errorf("--profile: %w", err)}
	}
	return in, nil
}

// loadConfig checks the load-shape flags and turns them into a load.Config.
func (o *runOptions) loadConfig(flags *pflag.FlagSet) (load.Config, error) {
	cfg := load.Config{
		Concurrency:            o.concurrency,
		MaxConcurrency:         o.maxConcurrency,
		Requests:               o.requests,
		Duration:               o.duration,
		Grace:                  o.grace,
		Warmup:                 o.warmup,
		Seed:                   o.seed,
		MaxConsecutiveFailures: o.maxConsecutiveFailures,
	}
	if o.rate != "" {
		r, err := strconv.ParseFloat(o.rate, 64)
		if err != nil || math.IsNaN(r) || r <= 0 {
			return cfg, usagef("--rate %q: want a positive number of requests per second, or inf", o.rate)
		}
		cfg.Rate = r
	}
	set := flags.Changed
	switch {
	case set("concurrency") && o.concurrency < 1:
		return cfg, usagef("--concurrency %d: want at least 1 request in flight", o.concurrency)
	case o.concurrency == 0 && cfg.Rate == 0 && o.data.file == "":
		return cfg, usagef("say how to load the server: --concurrency N (closed loop) or --rate R (open loop)")
	case o.concurrency != 0 && cfg.Rate != 0:
		return cfg, usagef("--concurrency and --rate exclude each other: --concurrency is a closed loop, --rate an open loop (cap it with --max-concurrency)")
	case set("requests") && o.requests < 1:
		return cfg, usagef("--requests %d: want at least 1 (leave it out to bound the run by --duration alone)", o.requests)
	case set("duration") && o.duration <= 0:
		return cfg, usagef("--duration %s: want a positive duration such as 30s (leave it out to bound the run by --requests alone)", o.duration)
	case o.requests == 0 && o.duration == 0 && o.data.file == "":
		return cfg, usagef("bound the run: --requests N and/or --duration D")
	case o.warmup < 0:
		return cfg, usagef("--warmup %d: want 0 or more", o.warmup)
	case o.maxConcurrency < 0:
		return cfg, usagef("--max-concurrency %d: want a positive cap, or 0 for none", o.maxConcurrency)
	case o.concurrency != 0 && o.maxConcurrency != 0:
		return cfg, usagef("--max-concurrency caps an open loop (--rate); with --concurrency the loop is already capped")
	case o.grace <= 0:
		return cfg, usagef("--grace %s: want a positive duration (default %s)", o.grace, load.DefaultGrace)
	case set("grace") && o.duration == 0:
		return cfg, usagef("--grace applies after --duration's deadline: add --duration, or drop --grace")
	case o.maxConsecutiveFailures < 0:
		return cfg, usagef("--max-consecutive-failures %d: want a positive count, or 0 to never stop early (default %d)", o.maxConsecutiveFailures, load.DefaultMaxConsecutiveFailures)
	case math.IsNaN(o.burstiness) || o.burstiness <= 0:
		// vLLM asserts burstiness > 0: a gamma shape of 0 is no distribution.
		return cfg, usagef("--burstiness %v: want a positive gamma shape (1: Poisson, below 1 burstier, inf: constant rate)", o.burstiness)
	case set("burstiness") && cfg.Rate == 0:
		return cfg, usagef("--burstiness shapes the arrivals of an open loop: use it with --rate, not --concurrency")
	}
	if cfg.Rate != 0 {
		cfg.Burstiness = o.burstiness
	}
	return cfg, nil
}

// checkSizes checks the request-shape and timing flags.
func (o *runOptions) checkSizes(flags *pflag.FlagSet) error {
	switch {
	case o.promptTokens < workload.UniqueWords:
		return usagef("--prompt-tokens %d: want at least %d, the words that make each prompt unique", o.promptTokens, workload.UniqueWords)
	case o.maxTokens < 1:
		return usagef("--max-tokens %d: want at least 1 completion token", o.maxTokens)
	case o.sharedPrefix < 0 || (o.sharedPrefix > 0 && o.sharedPrefix < workload.NonceWords):
		return usagef("--shared-prefix-tokens %d: want 0 (no shared prompt) or at least %d", o.sharedPrefix, workload.NonceWords)
	case o.requestTimeout < 0:
		return usagef("--request-timeout %s: want a positive duration, or 0 for none", o.requestTimeout)
	case o.idleTimeout < 0:
		return usagef("--idle-timeout %s: want a positive duration, or 0 for none", o.idleTimeout)
	case o.sampleInterval <= 0:
		return usagef("--sample-interval %s: want a positive duration such as 2s", o.sampleInterval)
	case o.waitReady < 0:
		return usagef("--wait-ready %s: want a positive duration such as 2m, or 0 to check /health once", o.waitReady)
	}
	return nil
}

// checkBackendFlags refuses flags that mean nothing with the backend
// chosen: a profile or an image for a server that is already running.
func (o *runOptions) checkBackendFlags(flags *pflag.FlagSet) error {
	given := o.externalSource()
	external := given != ""
	for _, name := range []string{"profile", "image"} {
		if external && flags.Changed(name) {
			return usagef("--%s needs a backend that starts a server, but %s names one that is already running (with its own flags): drop --%s", name, given, name)
		}
	}
	if o.image != "" && o.backend != "" && !strings.EqualFold(strings.TrimSpace(o.backend), string(server.KindContainer)) {
		return usagef("--image runs a container, but --backend %s starts none: use --backend container, or drop one of them", o.backend)
	}
	if o.waitReady > 0 && !external {
		return usagef("--wait-ready waits for a running server named by --target; the servers vllmperf starts are waited for anyway")
	}
	return nil
}

// externalSource names what selects the external backend (a server that
// is already running): "--target", "--backend external", or the
// environment's VLLMPERF_BACKEND=external; "" when another backend runs.
func (o *runOptions) externalSource() string {
	backend := strings.TrimSpace(o.backend)
	switch {
	case o.target != "":
		return "--target"
	case strings.EqualFold(backend, string(server.KindExternal)):
		return "--backend external"
	case backend == "" && strings.EqualFold(strings.TrimSpace(os.Getenv(envBackend)), string(server.KindExternal)):
		return envBackend + "=external"
	}
	return ""
}

// envBackend is the variable that selects the backend (server.FromEnv).
const envBackend = "VLLMPERF_BACKEND"

// parseSize reads a byte size such as 4MiB, 512KiB or 1048576.
func parseSize(flag, v string) (int, error) {
	n, err := dockerunits.RAMInBytes(strings.TrimSpace(v))
	if err != nil || n > math.MaxInt32 {
		return 0, usagef("%s %q: want a size such as 4MiB or 512KiB (0: no cap)", flag, v)
	}
	return int(n), nil
}

// parseRate reads a share as a fraction (0.05) or a percentage (5%).
func parseRate(flag, v string) (float64, error) {
	s := strings.TrimSpace(v)
	scale := 1.0
	if strings.HasSuffix(s, "%") {
		s, scale = strings.TrimSpace(strings.TrimSuffix(s, "%")), 100
	}
	r, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(r) || r < 0 || r/scale > 1 {
		return 0, usagef("%s %q: want a fraction from 0 to 1 (0.05) or a percentage from 0%% to 100%% (5%%)", flag, v)
	}
	return r / scale, nil
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

// keyError says the server refused the key, naming where it came from.
func (o *runOptions) keyError() error {
	switch {
	case o.apiKeyEnv != "":
		return errors.New(openai.KeyAdvice("$" + o.apiKeyEnv))
	case os.Getenv(DefaultAPIKeyEnv) != "":
		return errors.New(openai.KeyAdvice("$" + DefaultAPIKeyEnv))
	}
	return fmt.Errorf("%s; put it in a variable and name it with --api-key-env (default %s)", openai.KeyAdvice(""), DefaultAPIKeyEnv)
}

// serverOptions resolves the backend from the environment and the flags:
// the environment's options first, the flags' after them (they win).
func (o *runOptions) serverOptions(in *runInput, stderr io.Writer, key string) ([]server.Option, error) {
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
	if in.target != "" {
		opts = append(opts, server.WithBackend(server.KindExternal), server.WithTarget(in.target))
	}
	if o.image != "" {
		opts = append(opts, server.WithImage(o.image))
		if o.backend == "" {
			opts = append(opts, server.WithBackend(server.KindContainer)) // an image only means something to the container backend
		}
	}
	if o.model != "" {
		opts = append(opts, server.WithModel(o.model)) // the external backend checks the server serves it
	}
	if !o.quiet {
		opts = append(opts, server.WithLog(stderr))
	}
	return append(opts, server.WithAPIKey(key), server.WithWaitReady(o.waitReady)), nil
}

// startServer starts (or reaches) the server, turning its errors into
// what the user can act on.
func (o *runOptions) startServer(ctx context.Context, in *runInput, stderr io.Writer, key string) (server.Server, error) {
	srvOpts, err := o.serverOptions(in, stderr, key)
	if err != nil {
		return nil, err
	}
	srv, err := server.Run(ctx, in.profile, srvOpts...)
	switch {
	case err == nil:
		return srv, nil
	case errors.Is(err, server.ErrSettings):
		return nil, usageError{err}
	case errors.Is(err, server.ErrKeyRejected):
		return nil, errors.Join(err, o.keyError())
	case errors.Is(err, server.ErrUnhealthy) && o.waitReady == 0:
		return nil, fmt.Errorf("%w\nif the server is still starting, wait for it with --wait-ready, e.g. --wait-ready 5m", err)
	}
	return nil, err
}

// runError turns harness.Run's refusals into what the user can act on: a
// point whose requests would not fit the server's context length (the
// flags that make them), and a key the server refused (where it came from).
func (o *runOptions) runError(err error) error {
	var ce *harness.ContextError
	switch {
	case errors.As(err, &ce) && o.data.file != "":
		return o.data.contextError(ce)
	case errors.As(err, &ce):
		return usagef("--prompt-tokens %d + --shared-prefix-tokens %d + --max-tokens %d = %d tokens, more than the %d the server accepts for %s (max_model_len on /v1/models): every request would fail; lower them",
			o.promptTokens, o.sharedPrefix, o.maxTokens, o.promptTokens+o.sharedPrefix+o.maxTokens, ce.MaxModelLen, ce.Model)
	case errors.Is(err, openai.ErrKeyRejected):
		return errors.Join(err, o.keyError())
	}
	return err
}

func (o *runOptions) run(ctx context.Context, flags *pflag.FlagSet, stdout, stderr io.Writer) error {
	in, err := o.parse(flags, stderr)
	if err != nil {
		return err
	}
	key, err := o.apiKey()
	if err != nil {
		return err
	}
	outs, err := openOutputs(o.jsonPath, o.samplesPath)
	if err != nil {
		return err
	}
	defer outs.discard()
	srv, err := o.startServer(ctx, in, stderr, key)
	if err != nil {
		return interrupted(ctx, err)
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

	bar := progress.New(stderr, o.quiet, in.load)
	res, err := harness.Run(ctx, srv, o.point(in),
		harness.WithModel(model),
		harness.WithAPIKey(key),
		harness.WithEndpoint(in.endpoint),
		harness.WithSeed(o.seed),
		harness.WithGoodput(in.slo),
		harness.WithTimeouts(o.requestTimeout, o.idleTimeout),
		harness.WithMaxEventSize(in.maxEventSize),
		harness.WithProgress(bar.Update),
	)
	bar.Finish()
	if err != nil {
		return interrupted(ctx, o.runError(err))
	}
	return o.finish(ctx, res, in, outs, srv, stdout, stderr)
}

// interrupted marks err as the end of a run the user interrupted (exit
// 128+N), when ctx was canceled.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	return interruptedError{cause: cause, msg: fmt.Sprintf("interrupted (%v): %v", cause, err)}
}

// finish writes the outputs (files first, each on its own, then the
// summary on stdout) and judges the run. The error lists every problem,
// the one that sets the exit status first.
func (o *runOptions) finish(ctx context.Context, res *harness.Result, in *runInput, outs *outputs, srv server.Server, stdout, stderr io.Writer) error {
	sum := res.Summary
	var problems []error
	if err := outs.json.Write(func(w io.Writer) error { return vllmfmt.WriteJSON(w, sum, res.ReportMeta()) }); err != nil {
		problems = append(problems, err)
	}
	if err := outs.samples.Write(func(w io.Writer) error { return vllmfmt.WriteSamples(w, res.Samples()) }); err != nil {
		problems = append(problems, err)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "vllmperf: warning: %v\n", w)
	}
	if err := res.WriteText(stdout, srv.ReadyIn()); err != nil {
		problems = append(problems, fmt.Errorf("write the summary to stdout: %w (the files are written all the same)", err))
	}
	verdict := o.judge(ctx, res, in, outs)
	return errors.Join(append(verdict[:len(verdict):len(verdict)], problems...)...)
}

// judge says what was wrong with the run, most serious first: an
// interruption, a server that went down, an early stop, a failure rate
// above the limit, a refused key, and last an inconclusive result.
func (o *runOptions) judge(ctx context.Context, res *harness.Result, in *runInput, outs *outputs) []error {
	sum := res.Summary
	var out []error
	if res.Load.Canceled {
		saved := ""
		if ps := outs.paths(); len(ps) > 0 {
			saved = " and in " + strings.Join(ps, ", ")
		}
		cause := context.Cause(ctx)
		if cause == nil {
			cause = context.Canceled
		}
		out = append(out, interruptedError{cause: cause, msg: fmt.Sprintf("interrupted (%v) after %d requests (%d cut short, counted apart from failures): partial results above%s",
			cause, len(res.Samples()), sum.Interrupted, saved)})
	}
	for _, e := range check.Ended(res) {
		if e == error(res.Load.Streak) {
			e = fmt.Errorf("%w (--max-consecutive-failures %d; 0 never stops early)", e, o.maxConsecutiveFailures)
		}
		out = append(out, e)
	}
	if err := check.FailureError(sum, in.maxFailureRate, "--max-failure-rate"); err != nil {
		out = append(out, err)
	}
	if sum.FailedByKind[sample.ErrAuth] > 0 {
		out = append(out, o.keyError())
	}
	if reason, bad := sum.Inconclusive(); bad {
		out = append(out, inconclusiveError{reason})
	}
	return out
}

// class is the run's one class: random-word prompts (with an optional
// shared system prompt), or --dataset's, which may set the load's
// arrivals and size.
func (o *runOptions) class(flags *pflag.FlagSet, cfg *load.Config) (workload.Class, error) {
	class := workload.Class{Name: "run", Weight: 1, Config: workload.Config{
		PromptTokens:       o.promptTokens,
		MaxTokens:          o.maxTokens,
		IgnoreEOS:          true,
		SharedPrefixTokens: o.sharedPrefix,
	}}
	if err := o.data.check(flags); err != nil || o.data.file == "" {
		return class, err
	}
	return class, o.data.apply(flags, o.seed, cfg, &class)
}

// point is the run as a scenario point: its class under the flags' load
// shape.
func (o *runOptions) point(in *runInput) scenario.Point {
	return scenario.Point{Key: "run", Classes: []workload.Class{in.class}, Load: in.load, SamplerInterval: o.sampleInterval}
}
