package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	vllmperf "github.com/vllmperf/vllmperf"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/harness/gate"
	"github.com/vllmperf/vllmperf/internal/harness/history/cli"
	"github.com/vllmperf/vllmperf/internal/harness/thresholds"
)

// StepSummaryEnv names the file GitHub Actions shows as the job's summary;
// the gate appends its markdown report there when it is set.
const StepSummaryEnv = cli.StepSummaryEnv

// gateOptions are the flags of `vllmperf gate`.
type gateOptions struct {
	baseline   string
	next       string
	thresholds string
	format     string
	force      bool
	summary    string
	jsonFile   string
}

func newGateCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &gateOptions{}
	cmd := &cobra.Command{
		Use:   "gate --baseline FILE --new FILE",
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
		Example: `  vllmperf gate --baseline baselines/sim.txt --new results/bench.txt
  vllmperf gate --baseline old.txt --new new.txt --format json | jq '.rows[] | select(.verdict == "REGRESSION")'
  vllmperf gate --baseline baselines/sim.txt --new results/X/bench.txt --json results/X/gate.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runGate(o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.baseline, "baseline", "", "the stored results to compare against (benchfmt)")
	f.StringVar(&o.next, "new", "", "the results to judge (benchfmt)")
	f.StringVar(&o.thresholds, "thresholds", "", "thresholds.yaml with the gate's settings and limits (default ./"+vllmperf.ThresholdsFile+" if present, else the shipped one, built in); a file given that is missing is an error")
	f.StringVar(&o.format, "format", "text", "report format: "+strings.Join(gate.Formats, ", "))
	f.BoolVar(&o.force, "force", false, "compare even when gpu, model, backend, image or the profiles differ")
	f.StringVar(&o.summary, "step-summary", os.Getenv(StepSummaryEnv), "append the markdown report to this file (default $"+StepSummaryEnv+", GitHub Actions' job summary; empty for none)")
	f.StringVar(&o.jsonFile, "json", "", "also write the JSON report to this file, whatever --format says (make bench writes gate.json into the results folder)")
	return cmd
}

func runGate(o *gateOptions, stdout, stderr io.Writer) error {
	if o.baseline == "" || o.next == "" {
		return usagef("gate needs --baseline FILE and --new FILE: the stored results and the new ones, both `go test -bench Perf` output")
	}
	if !slices.Contains(gate.Formats, o.format) {
		return usagef("--format %q: want one of %s", o.format, strings.Join(gate.Formats, ", "))
	}
	set, err := loadThresholds(o.thresholds)
	if err != nil {
		return usageError{err}
	}
	base, err := gate.ReadFile(o.baseline)
	if err != nil {
		return usageError{err}
	}
	next, err := gate.ReadFile(o.next)
	if err != nil {
		return usageError{err}
	}
	rep, err := gate.Compare(base, next, set, gate.Options{Force: o.force})
	if err != nil {
		return usageError{err}
	}

	if err := rep.WriteFormat(stdout, o.format); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	if o.jsonFile != "" {
		if err := rep.WriteFile(o.jsonFile, "json"); err != nil {
			return err
		}
	}
	if o.summary != "" {
		if err := appendStepSummary(o.summary, "", rep); err != nil {
			fmt.Fprintf(stderr, "vllmperf gate: warning: %v\n", err)
		}
	}
	return gateResult(rep)
}

// loadThresholds reads the file given, else ./thresholds.yaml when it
// exists, else the shipped one (built in).
func loadThresholds(path string) (*thresholds.Set, error) {
	return thresholds.Resolve(path, ".")
}

// appendStepSummary adds the markdown report to the GitHub Actions job
// summary, after intro (markdown, may be empty).
func appendStepSummary(path, intro string, rep *gate.Report) error {
	if err := rep.AppendMarkdown(path, intro); err != nil {
		return fmt.Errorf("%s: %w", StepSummaryEnv, err)
	}
	return nil
}

// gateResult maps the report to the command's result: nil (exit 0), an
// error (exit 1), a usageError for an INVALID run (exit 2) or an
// inconclusiveError (exit 3).
func gateResult(rep *gate.Report) error {
	switch rep.Outcome() {
	case gate.OutcomeFail:
		return errors.New(rep.Headline())
	case gate.OutcomeInconclusive:
		return inconclusiveError{rep.InconclusiveReason()}
	case gate.OutcomeInvalid:
		return usageError{errors.New(rep.Headline())} // exit 2: not a sound measurement
	}
	return nil
}
