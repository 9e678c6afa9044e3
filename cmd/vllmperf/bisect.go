package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/orchestrate/bisect"
	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

func newBisectCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &cliflags.BisectFlags{}
	cmd := &cobra.Command{
		Use:   "bisect --candidates FILE",
		Short: "Find the first build that regressed, with the upgrade gate at midpoints",
		Long: `Bisect finds the first bad build in an ordered list of builds, as git bisect
does for commits. FILE lists the builds, one a line, the known-good first and
the known-bad last: a vLLM image reference (a release, a nightly or a
per-commit image, best by digest) or "sim" followed by --sim-* flags (the
embedded simulator). Blank lines and # comments are skipped.

Each step runs the upgrade gate, the known-good build as OLD and a midpoint
as NEW, interleaved, with the gate's settings (points, size, pairs, servers,
thresholds):

  DIFFERENT  the build is bad: the first bad build is it or before it
  SAME       the build is good: the first bad build is after it
  UNKNOWN    still undecided at --max-pairs: the build is skipped
  no start   a build that does not start or run is skipped

A skipped build is stepped around (the untested build nearest the middle is
taken instead); when skips hide the first bad build, the range it is in is
named. The known-bad end is compared only when the search never compares it,
so n builds take at most log2(n-1), rounded up, plus one comparisons. The
cost is predicted before the first step; each step's folder keeps its bench
files, and a bisection run again on the same --results folder compares a
finished step's runs again instead of measuring them again.

It ends with the first bad build (exit 0), the evidence of each step and the
time spent, and writes bisect.html into the results folder; no first bad
build named (nothing regressed, or skips) is inconclusive (exit 3). See
docs/bisect.md, which shows how to list vLLM's nightly or per-commit images.`,
		Example: `  vllmperf bisect --candidates builds.txt --size quick
  vllmperf bisect --candidates builds.txt --points profile=basic/scenario=ttft-tpot --max-pairs 12`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := o.Config(cmd.Flags().Changed, stderr)
			if err != nil {
				return exitstatus.Usage(err)
			}
			res, err := bisect.Run(cmd.Context(), cfg)
			var merr *input.MismatchError
			switch {
			case errors.Is(err, upgrade.ErrSettings), errors.Is(err, server.ErrSettings), errors.Is(err, bisect.ErrCandidates), errors.As(err, &merr):
				return exitstatus.Usage(err)
			case err != nil:
				return fmt.Errorf("bisect: %w", err)
			}
			return o.Publish(res, cfg.Dir, stdout)
		},
	}
	cliflags.Bisect(cmd.Flags(), o)
	return cmd
}
