package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/exitstatus"
	"github.com/vllmperf/vllmperf/internal/harness"
	"github.com/vllmperf/vllmperf/internal/harness/check"
	"github.com/vllmperf/vllmperf/internal/harness/load"
	"github.com/vllmperf/vllmperf/internal/harness/openai"
	"github.com/vllmperf/vllmperf/internal/harness/profile"
	"github.com/vllmperf/vllmperf/internal/harness/scenario"
	"github.com/vllmperf/vllmperf/internal/harness/server"
	"github.com/vllmperf/vllmperf/internal/harness/stats"
	"github.com/vllmperf/vllmperf/internal/harness/vllmfmt"
	"github.com/vllmperf/vllmperf/internal/harness/workload"
	"github.com/vllmperf/vllmperf/internal/progress"
)

// runOptions are the flags of `vllmperf run`, each group bound and checked
// by the package it configures.
type runOptions struct {
	server   server.Flags
	load     load.Flags
	request  workload.Flags
	client   openai.Flags
	goodput  []string
	failRate string
	files    outputFlags
	quiet    bool
	interval time.Duration
}

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
	o.server.Register(f)
	o.load.Register(f)
	o.request.Register(f)
	o.client.Register(f)
	f.StringSliceVar(&o.goodput, "goodput", nil, "SLOs for goodput, vLLM style: ttft:MS,tpot:MS,e2el:MS")
	f.StringVar(&o.failRate, "max-failure-rate", "0", "fail the run (exit 1) when a larger share of the measured requests fails: a fraction (0.05) or a percentage (5%)")
	o.files.register(f)
	f.BoolVar(&o.quiet, "quiet", false, "no progress bar on stderr")
	f.DurationVar(&o.interval, "sample-interval", scenario.DefaultSamplerInterval, "how often /metrics is sampled during the load (running, waiting, KV usage, tokens/s)")
	return cmd
}

// noArgs refuses positional arguments as a usage error (exit 2), with the
// flag the argument probably belongs to.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	hint := fmt.Sprintf("see '%s --help'", cmd.CommandPath())
	if strings.Contains(args[0], ":") {
		hint = "a server's URL goes after --target"
	}
	return usagef("unexpected argument %q: %s takes flags only (%s)", args[0], cmd.CommandPath(), hint)
}

// runInput is what the flags ask for, checked by the packages that own them.
type runInput struct {
	point   scenario.Point
	slo     stats.SLO
	client  openai.Settings
	limits  check.RunLimits
	profile profile.Profile
	servers []server.Option
}

// parse checks every flag; its errors are usage errors naming the flag.
func (o *runOptions) parse(flags *pflag.FlagSet, stderr io.Writer) (*runInput, error) {
	in := &runInput{limits: check.RunLimits{FailureRateFlag: "--max-failure-rate", StreakFlag: "--max-consecutive-failures", MaxStreak: o.load.MaxConsecutiveFailures}}
	cfg, err := o.load.Config(flags)
	if err != nil {
		return nil, err
	}
	class, err := o.request.Class("run")
	if err != nil {
		return nil, err
	}
	if o.interval <= 0 {
		return nil, fmt.Errorf("--sample-interval %s: want a positive duration such as 2s", o.interval)
	}
	in.point = scenario.Point{Key: "run", Classes: []workload.Class{class}, Load: cfg, SamplerInterval: o.interval}
	if in.slo, err = stats.ParseSLO(o.goodput); err != nil {
		return nil, fmt.Errorf("--goodput %w", err)
	}
	if in.client, err = o.client.Settings(); err != nil {
		return nil, err
	}
	if in.limits.MaxFailureRate, err = check.ParseShare("--max-failure-rate", o.failRate); err != nil {
		return nil, err
	}
	in.profile, in.servers, err = o.server.Options(flags, in.client.APIKey, stderr, o.quiet)
	return in, err
}

func (o *runOptions) run(ctx context.Context, flags *pflag.FlagSet, stdout, stderr io.Writer) error {
	in, err := o.parse(flags, stderr)
	if err != nil {
		return exitstatus.Usage(err)
	}
	outs, err := o.files.open()
	if err != nil {
		return err
	}
	defer outs.discard()
	srv, err := server.Run(ctx, in.profile, in.servers...)
	if err != nil {
		return exitstatus.Interrupted(ctx, o.startError(err))
	}
	defer closeServer(ctx, srv, stderr)
	model := o.server.Model
	if model == "" {
		model = srv.Model()
	}
	if model == "" {
		return usagef("no model to request: pass --model (the server's served model name)")
	}
	bar := progress.New(stderr, o.quiet, in.point.Load)
	res, err := harness.Run(ctx, srv, in.point, harness.WithModel(model), harness.WithAPIKey(in.client.APIKey),
		harness.WithEndpoint(in.client.Endpoint), harness.WithSeed(o.load.Seed), harness.WithGoodput(in.slo),
		harness.WithTimeouts(o.client.RequestTimeout, o.client.IdleTimeout), harness.WithMaxEventSize(in.client.MaxEventSize),
		harness.WithProgress(bar.Update))
	bar.Finish()
	if err != nil {
		return exitstatus.Interrupted(ctx, o.runError(err))
	}
	return o.finish(ctx, res, in, outs, srv, stdout, stderr)
}

// startError turns server.Run's errors into what the user can act on.
func (o *runOptions) startError(err error) error {
	switch {
	case errors.Is(err, server.ErrSettings):
		return exitstatus.Usage(err)
	case errors.Is(err, server.ErrKeyRejected):
		return errors.Join(err, o.client.KeyError())
	}
	return o.server.StartError(err)
}

// runError turns harness.Run's refusals into what the user can act on: a
// point whose requests would not fit the server's context length (the
// flags that make them), and a key the server refused (where it came from).
func (o *runOptions) runError(err error) error {
	var ce *harness.ContextError
	switch {
	case errors.As(err, &ce):
		return exitstatus.Usage(o.request.TooLong(ce.MaxModelLen, ce.Model))
	case errors.Is(err, openai.ErrKeyRejected):
		return errors.Join(err, o.client.KeyError())
	}
	return err
}

// closeServer stops the server (a container removed) even when the run
// was interrupted.
func closeServer(ctx context.Context, srv server.Server, stderr io.Writer) {
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := srv.Close(closeCtx); err != nil {
		fmt.Fprintln(stderr, "vllmperf: stopping the server:", err)
	}
}

// finish writes the outputs (files first, each on its own, then the
// summary on stdout) and judges the run. The error lists every problem,
// the one that sets the exit status first.
func (o *runOptions) finish(ctx context.Context, res *harness.Result, in *runInput, outs *outputs, srv server.Server, stdout, stderr io.Writer) error {
	problems := []error{
		outs.json.Write(func(w io.Writer) error { return vllmfmt.WriteJSON(w, res.Summary, res.ReportMeta()) }),
		outs.samples.Write(func(w io.Writer) error { return vllmfmt.WriteSamples(w, res.Samples()) }),
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "vllmperf: warning: %v\n", w)
	}
	if err := res.WriteText(stdout, srv.ReadyIn()); err != nil {
		problems = append(problems, fmt.Errorf("write the summary to stdout: %w (the files are written all the same)", err))
	}
	return errors.Join(append(o.judge(ctx, res, in, outs), problems...)...)
}

// judge says what was wrong with the run, most serious first: an
// interruption, then check.Judge's verdict (a server that went down, an
// early stop, a failure rate above the limit, a refused key, and last an
// inconclusive result).
func (o *runOptions) judge(ctx context.Context, res *harness.Result, in *runInput, outs *outputs) []error {
	var out []error
	if res.Load.Canceled {
		saved := ""
		if ps := outs.paths(); len(ps) > 0 {
			saved = " and in " + strings.Join(ps, ", ")
		}
		cause := exitstatus.Cause(ctx)
		out = append(out, exitstatus.InterruptedError{Cause: cause, Msg: fmt.Sprintf("interrupted (%v) after %d requests (%d cut short, counted apart from failures): partial results above%s",
			cause, len(res.Samples()), res.Summary.Interrupted, saved)})
	}
	v := check.Judge(res, in.limits)
	out = append(out, v.Failures...)
	if v.KeyRefused {
		out = append(out, o.client.KeyError())
	}
	if v.Inconclusive != "" {
		out = append(out, exitstatus.Inconclusive(v.Inconclusive))
	}
	return out
}
