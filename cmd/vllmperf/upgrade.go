package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

func newUpgradeCommand(stdout, stderr io.Writer) *cobra.Command {
	o := &cliflags.UpgradeFlags{}
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
  INVALID    a run was no sound measurement (a throttled or shared GPU, a
             slower runner): the gate stops, exit 2 (more pairs cannot clear it)

It also sends both the same greedy requests (temperature 0, fixed prompts of
each point's shape) and compares the outputs: thresholds.yaml's parity: says
how many may differ from their first tokens on; past that the upgrade fails
(exit 1) whatever the timing says (docs/gate.md, "Output parity").

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
	cliflags.Upgrade(cmd.Flags(), o)
	return cmd
}

func runUpgrade(cmd *cobra.Command, o *cliflags.UpgradeFlags, stdout, stderr io.Writer) error {
	cfg, err := o.Config(cmd.Flags().Changed, stderr)
	if err != nil {
		return exitstatus.Usage(err)
	}
	res, err := upgrade.Run(cmd.Context(), cfg)
	var merr *input.MismatchError
	switch {
	case errors.Is(err, upgrade.ErrSettings), errors.Is(err, server.ErrSettings), errors.As(err, &merr):
		return exitstatus.Usage(err)
	case err != nil: // stopped by a signal: 128+N
		return exitstatus.Interrupted(cmd.Context(), fmt.Errorf("upgrade gate: %w", err))
	}
	return o.Publish(res, cfg.Dir, stdout, stderr)
}
