package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/runflags"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/outfile"
	"github.com/vllmperf/vllmperf/internal/progress"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/vllmfmt"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// runOptions are the flags of `vllmperf run`: one run's (package runflags)
// and the verdict's and output files' own.
type runOptions struct {
	runflags.Flags
	errorRate string
	samples   string
}

func newRunCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:     "run",
		Short:   "Run one load scenario against a server and print the summary",
		Long:    cliflags.RunLong,
		Example: cliflags.RunExample,
		Args:    cliflags.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.Flags(), stdout, stderr)
		},
	}
	f := cmd.Flags()
	o.Register(f)
	cliflags.ErrorRate(f, &o.errorRate)
	f.SetOutput(stderr) // pflag's notices (a deprecated flag), never on the summary's stdout
	f.StringVar(&o.JSON, "json", "", "write the summary as vLLM --save-result JSON to this file")
	f.StringVar(&o.samples, "samples", "", "write every request's record as JSON lines to this file")
	return cmd
}

func (o *runOptions) run(ctx context.Context, flags *pflag.FlagSet, stdout, stderr io.Writer) error {
	in, err := o.Parse(flags, stderr)
	if err != nil {
		return exitstatus.Usage(err)
	}
	limits := check.RunLimits{ErrorRateFlag: cliflags.ErrorRateFlag, StreakFlag: "--max-consecutive-failures", MaxStreak: o.Load.MaxConsecutiveFailures, OverloadFlag: "--no-overload-stop", KeyError: o.KeyError()}
	if limits.MaxErrorRate, err = cliflags.ParseErrorRate(flags, o.errorRate); err != nil {
		return exitstatus.Usage(err)
	}
	outs, err := outfile.OpenSet(in.ResultFlag, in.ResultPath, "--samples", o.samples)
	if err != nil {
		return exitstatus.Usage(err)
	}
	defer outs.Discard()
	limits.Saved = outs.Paths()
	folder, err := suite.CreateRunFolder(o.Results)
	if err != nil {
		return exitstatus.Usage(err)
	}
	defer folder.Discard()
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
	res, err := pipeline.Run(ctx, srv, in.Point, opts...)
	bar.Finish()
	if err != nil {
		return exitstatus.Interrupted(ctx, o.Explain(err))
	}
	problems := []error{
		outs[0].Write(func(w io.Writer) error {
			return vllmfmt.WriteJSONWith(w, res.Summary, res.ReportMeta(), res.JSONExtras()...)
		}),
		outs[1].Write(func(w io.Writer) error { return vllmfmt.WriteSamples(w, res.Samples()) }),
		folder.Record(ctx, srv, in.Profile, res),
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
