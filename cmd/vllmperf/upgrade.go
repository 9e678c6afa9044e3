package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/exitstatus"
	"github.com/vllmperf/vllmperf/internal/harness/gate"
	"github.com/vllmperf/vllmperf/internal/harness/scenario"
	"github.com/vllmperf/vllmperf/internal/harness/server"
	"github.com/vllmperf/vllmperf/internal/harness/suite"
	"github.com/vllmperf/vllmperf/internal/harness/upgrade"
)

// The files upgrade-gate writes next to old.txt and new.txt.
const (
	upgradeReportText = "gate.txt"
	upgradeReportJSON = "gate.json"
)

// upgradeOptions are the flags of `vllmperf upgrade-gate`.
type upgradeOptions struct {
	old, next         string
	oldSim, newSim    string
	points            []string
	size              string
	minPairs, maxPair int
	servers           string
	thresholds        string
	results           string
	format            string
	summary           string
}

func newUpgradeCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &upgradeOptions{}
	cmd := &cobra.Command{
		Use:   "upgrade-gate --old IMAGE --new IMAGE",
		Short: "Run scenarios on two vLLM images interleaved and gate NEW against OLD",
		Long: `Upgrade-gate runs the same scenario points on OLD and NEW, interleaved on this
machine (OLD NEW, NEW OLD, OLD NEW, ...) so that the machine's drift falls on
both sides, and gates NEW against OLD as "vllmperf gate" does (the image is
not compared; gpu, model and backend are). It starts at --min-pairs pairs and
adds pairs while the answer is UNKNOWN, up to --max-pairs:

  DIFFERENT  NEW is worse (a regression or a breached limit): exit 1
  SAME       no regression as large as thresholds.yaml's min_effect: exit 0
  UNKNOWN    still undecided at the cap: exit 3 (raise --max-pairs)

An image is a vLLM image reference (container backend, on the GPUs),
"sim" (the simulator's image) or "in-process" (the embedded simulator). For
a test of the gate itself, give one simulator side a handicap:
--new-sim-args "--sim-slowdown 1.1". The server settings (HF cache, GPUs,
start-up timeout, model) come from the environment as for "vllmperf run".

The results folder gets old.txt and new.txt (every run, bench format),
gate.txt and gate.json (the last comparison) and each side's results folder
(old/, new/). See docs/gate.md.`,
		Example: `  vllmperf upgrade-gate --old vllm/vllm-openai:v0.10.2 --new vllm/vllm-openai:v0.11.0
  vllmperf upgrade-gate --old in-process --new in-process --new-sim-args "--sim-slowdown 1.1" --size quick
  make upgrade-gate OLD=vllm/vllm-openai:v0.10.2 NEW=vllm/vllm-openai:v0.11.0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUpgrade(cmd, o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.old, "old", "", `the image to upgrade from: a vLLM image, "sim" or "in-process"`)
	f.StringVar(&o.next, "new", "", `the image to upgrade to: a vLLM image, "sim" or "in-process"`)
	f.StringVar(&o.oldSim, "old-sim-args", "", "--sim-* arguments for OLD only (simulators; VLLMPERF_SIM_ARGS applies to both)")
	f.StringVar(&o.newSim, "new-sim-args", "", `--sim-* arguments for NEW only, e.g. "--sim-slowdown 1.1"`)
	f.StringSliceVar(&o.points, "points", upgrade.DefaultPoints, "scenario points, comma-separated; path.Match globs per element, a scenario selects all its points")
	f.StringVar(&o.size, "size", "", "scenario size: full or quick (default $"+suite.EnvSize+", else full)")
	f.IntVar(&o.minPairs, "min-pairs", upgrade.DefaultMinPairs, "pairs before the first comparison")
	f.IntVar(&o.maxPair, "max-pairs", upgrade.DefaultMaxPairs, "the most pairs: UNKNOWN after that")
	f.StringVar(&o.servers, "servers", string(upgrade.DefaultServers), "restart: one server at a time, restarted per block (one GPU); keep: both up at once")
	f.StringVar(&o.thresholds, "thresholds", "", "thresholds.yaml (default $"+suite.EnvThresholds+", else thresholds.yaml at the module root if present, else the shipped one, built in)")
	f.StringVar(&o.results, "results", "", "results folder (default results/upgrade-<UTC timestamp>)")
	f.StringVar(&o.format, "format", "text", "report format on stdout: "+strings.Join(gate.Formats, ", "))
	f.StringVar(&o.summary, "step-summary", os.Getenv(StepSummaryEnv), "append the markdown report to this file (default $"+StepSummaryEnv+"; empty for none)")
	return cmd
}

func runUpgrade(cmd *cobra.Command, o *upgradeOptions, stdout, stderr io.Writer) error {
	cfg, err := upgradeConfig(cmd, o, stderr)
	if err != nil {
		return err
	}
	res, err := upgrade.Run(cmd.Context(), cfg)
	var cerr *gate.MismatchError
	switch {
	case errors.Is(err, upgrade.ErrSettings), errors.Is(err, server.ErrSettings), errors.As(err, &cerr):
		return exitstatus.Usage(err)
	case err != nil:
		return fmt.Errorf("upgrade gate: %w", err)
	}

	if err := res.Report.WriteFormat(stdout, o.format); err != nil {
		return fmt.Errorf("write the report: %w", err)
	}
	fmt.Fprintf(stdout, "\nupgrade gate %s → %s: %s\n", o.old, o.next, res.Headline())
	fmt.Fprintf(stdout, "results: %s\n", cfg.Dir)
	for name, format := range map[string]string{upgradeReportText: "text", upgradeReportJSON: "json"} {
		if err := res.Report.WriteFile(filepath.Join(cfg.Dir, name), format); err != nil {
			return err
		}
	}
	if o.summary != "" {
		if err := appendStepSummary(o.summary, res.SummaryIntro(o.old, o.next), res.Report); err != nil {
			fmt.Fprintf(stderr, "vllmperf upgrade-gate: warning: %v\n", err)
		}
	}
	switch res.Decision() {
	case gate.Different:
		return errors.New(res.Headline())
	case gate.Unknown:
		return exitstatus.Inconclusive(fmt.Sprintf("%s; raise --max-pairs (now %d) or thresholds.yaml's min_effect for the undecided metrics", res.Headline(), res.Pairs))
	}
	return nil
}

// upgradeConfig turns the flags and the environment into the gate's
// configuration; its errors are usage errors.
func upgradeConfig(cmd *cobra.Command, o *upgradeOptions, stderr io.Writer) (upgrade.Config, error) {
	if o.old == "" || o.next == "" {
		return upgrade.Config{}, usagef(`upgrade-gate needs --old IMAGE and --new IMAGE (a vLLM image, "sim" or "in-process")`)
	}
	if !slices.Contains(gate.Formats, o.format) {
		return upgrade.Config{}, usagef("--format %q: want one of %s", o.format, strings.Join(gate.Formats, ", "))
	}
	servers, err := upgrade.ParseServers(o.servers)
	if err != nil {
		return upgrade.Config{}, exitstatus.Usage(err)
	}
	base, err := suite.FromEnv(false)
	if err != nil {
		return upgrade.Config{}, exitstatus.Usage(err)
	}
	if cmd.Flags().Changed("size") {
		if base.Size, err = scenario.ParseSize(o.size); err != nil {
			return upgrade.Config{}, usagef("--size: %v", err)
		}
	}
	if o.thresholds != "" {
		if base.Thresholds, err = loadThresholds(o.thresholds); err != nil {
			return upgrade.Config{}, exitstatus.Usage(err)
		}
	}
	maxPairs := o.maxPair
	if !cmd.Flags().Changed("max-pairs") {
		maxPairs = 0 // the default cap, or --min-pairs when that is higher
	}
	dir := o.results
	if dir == "" {
		dir = filepath.Join("results", "upgrade-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	return upgrade.Config{
		Suite:    base,
		Old:      upgrade.Side{Image: o.old, SimArgs: strings.Fields(o.oldSim)},
		New:      upgrade.Side{Image: o.next, SimArgs: strings.Fields(o.newSim)},
		Points:   o.points,
		MinPairs: o.minPairs,
		MaxPairs: maxPairs,
		Servers:  servers,
		Dir:      dir,
		Log:      stderr,
	}, nil
}
