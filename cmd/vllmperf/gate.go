package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/gatecli"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// StepSummaryEnv names the file GitHub Actions shows as the job's summary.
const StepSummaryEnv = verdict.StepSummaryEnv

func newGateCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &gatecli.Flags{}
	cmd := &cobra.Command{
		Use:   "gate OLD NEW | gate --baseline OLD --new NEW",
		Short: "Compare benchmark results with a baseline and fail on a regression",
		Long: `Gate compares two files of "go test -bench Perf" output (the suite's results,
docs/bench-format.md) the way benchstat does (median, confidence interval,
Mann-Whitney U test), then decides per benchmark and metric: REGRESSION,
IMPROVEMENT, NO CHANGE or INCONCLUSIVE. Which way is better comes from the
files' Unit lines, thresholds.yaml's better:, or the unit's name. Holm's
correction covers every gated test of the run; a regression must also reach
thresholds.yaml's min_effect. thresholds.yaml's slo: limits and
max_error_rate are checked on the new results. See docs/gate.md.

Exit status: 0 pass, 1 regression, breached limit or failed check, 2 bad
input or an INVALID run (throttled or shared GPU), 3 inconclusive (run more: the report says how many). The markdown report is
also appended to $GITHUB_STEP_SUMMARY when it is set (--step-summary).`,
		Example: `  vllmperf gate baselines/sim.txt results/bench.txt            # as benchstat OLD NEW
  vllmperf gate --baseline baselines/sim.txt --new results/bench.txt
  vllmperf gate --baseline old.txt --new new.txt --format json | jq '.rows[] | select(.verdict == "REGRESSION")'
  vllmperf gate --baseline baselines/sim.txt --new results/X/bench.txt --json results/X/gate.json`,
		Args: cliflags.GateArgs(o),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return exitstatus.UntilCanceled(cmd.Context(), func() error { return o.Run(stdout, stderr) })
		},
	}
	cliflags.Gate(cmd.Flags(), o)
	return cmd
}

// loadThresholds reads the file given, else ./thresholds.yaml when it
// exists, else the shipped one (built in).
func loadThresholds(path string) (*thresholds.Set, error) {
	return thresholds.Resolve(path, ".")
}
