package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/runflags"
	"github.com/vllmperf/vllmperf/internal/exitstatus"
	"github.com/vllmperf/vllmperf/internal/harness"
	"github.com/vllmperf/vllmperf/internal/harness/check"
	"github.com/vllmperf/vllmperf/internal/harness/server"
	"github.com/vllmperf/vllmperf/internal/harness/units"
	"github.com/vllmperf/vllmperf/internal/harness/vllmfmt"
	"github.com/vllmperf/vllmperf/internal/outfile"
	"github.com/vllmperf/vllmperf/internal/progress"
)

// runOptions are the flags of `vllmperf run`: one run's (package runflags)
// and the verdict's and output files' own.
type runOptions struct {
	runflags.Flags
	errorRate     string
	json, samples string
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
(exit 1) when more requests fail than --max-error-rate allows, when it stops
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
	o.Register(f)
	f.StringVar(&o.errorRate, errorRateFlag[2:], "0", "fail the run (exit 1) when a larger share of the measured requests fails: a fraction (0.05) or a percentage (5%)")
	f.StringVar(&o.errorRate, oldErrorRateFlag[2:], "0", "the deprecated name of "+errorRateFlag)
	_ = f.MarkDeprecated(oldErrorRateFlag[2:], "use "+errorRateFlag+" (the same share, renamed)")
	// pflag prints the deprecation notice to the set's output, which cobra
	// would copy to stdout (the summary's stream): stderr instead.
	f.SetOutput(stderr)
	f.StringVar(&o.json, "json", "", "write the summary as vLLM --save-result JSON to this file")
	f.StringVar(&o.samples, "samples", "", "write every request's record as JSON lines to this file")
	return cmd
}

// errorRateFlag limits the share of failed requests; oldErrorRateFlag is
// its deprecated name, still accepted with a notice on stderr.
const (
	errorRateFlag    = "--max-error-rate"
	oldErrorRateFlag = "--max-failure-rate"
)

// parseErrorRate reads the error-rate limit as a fraction (units.ParseShare),
// the error naming the flag as the user wrote it.
func parseErrorRate(flags *pflag.FlagSet, v string) (float64, error) {
	name := errorRateFlag
	if flags.Changed(oldErrorRateFlag[2:]) {
		if flags.Changed(errorRateFlag[2:]) {
			return 0, fmt.Errorf("%s and %s set the same limit: give only %s", oldErrorRateFlag, errorRateFlag, errorRateFlag)
		}
		name = oldErrorRateFlag
	}
	sh, err := units.ParseShare(v, true)
	if err != nil {
		return 0, fmt.Errorf("%s %w", name, err)
	}
	return sh.Fraction(), nil
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

func (o *runOptions) run(ctx context.Context, flags *pflag.FlagSet, stdout, stderr io.Writer) error {
	in, err := o.Parse(flags, stderr)
	if err != nil {
		return exitstatus.Usage(err)
	}
	limits := check.RunLimits{ErrorRateFlag: errorRateFlag, StreakFlag: "--max-consecutive-failures", MaxStreak: o.Load.MaxConsecutiveFailures, KeyError: o.Client.KeyError()}
	if limits.MaxErrorRate, err = parseErrorRate(flags, o.errorRate); err != nil {
		return exitstatus.Usage(err)
	}
	outs, err := outfile.OpenSet("--json", o.json, "--samples", o.samples)
	if err != nil {
		return exitstatus.Usage(err)
	}
	defer outs.Discard()
	limits.Saved = outs.Paths()
	srv, err := server.Run(ctx, in.Profile, in.Servers...)
	if err != nil {
		return exitstatus.Interrupted(ctx, o.Explain(err))
	}
	defer func() {
		if err := server.Stop(ctx, srv); err != nil {
			fmt.Fprintln(stderr, "vllmperf: stopping the server:", err)
		}
	}()
	bar := progress.New(stderr, o.Quiet, in.Point.Load)
	opts, err := o.Options(in, srv, bar.Update)
	if err != nil {
		return err
	}
	res, err := harness.Run(ctx, srv, in.Point, opts...)
	bar.Finish()
	if err != nil {
		return exitstatus.Interrupted(ctx, o.Explain(err))
	}
	problems := []error{
		outs[0].Write(func(w io.Writer) error { return vllmfmt.WriteJSON(w, res.Summary, res.ReportMeta()) }),
		outs[1].Write(func(w io.Writer) error { return vllmfmt.WriteSamples(w, res.Samples()) }),
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "vllmperf: warning: %v\n", w)
	}
	if tp := res.TorchProfile; tp != nil && tp.Err == nil {
		fmt.Fprintln(stderr, "vllmperf:", tp.Summary())
	} else if tp != nil {
		problems = append(problems, fmt.Errorf("--torch-profile: %w", tp.Err)) // its warning above says why
	}
	if err := res.WriteText(stdout, srv.ReadyIn()); err != nil {
		problems = append(problems, fmt.Errorf("write the summary to stdout: %w (the files are written all the same)", err))
	}
	return errors.Join(append(check.Judge(ctx, res, limits), problems...)...)
}
