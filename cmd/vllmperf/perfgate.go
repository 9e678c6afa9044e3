package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/internal/orchestrate/perfgate"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// newPerfGateCommands are `vllmperf perf-gate` and `vllmperf plan`
// (package perfgate; configured by the environment, as make perf-gate).
func newPerfGateCommands(stdout, stderr io.Writer) []*cobra.Command {
	gateCmd := &cobra.Command{
		Use:   "perf-gate",
		Short: "What perf-gate.yml runs: plan, go test -bench Perf, gate against the key's baseline or record it (docs/gate.md; exit 0 pass, 1 fail, 2 INVALID, 3 inconclusive)", Long: cliflags.EnvHelp(cliflags.PerfGateLong, perfgate.Settings, cliflags.PerfGateMore),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := perfgate.OptionsFromEnv(stdout, stderr)
			if err != nil {
				return exitstatus.Usage(err)
			}
			return exitStatus(perfgate.Run(cmd.Context(), o))
		},
	}
	planCmd := &cobra.Command{
		Use:   "plan",
		Short: "State what make perf-gate would run: server starts, points, runs, and its time from the last run on the same key, or predicted on the simulator preset of the GPU (VLLMPERF_GPU_NAME)", Long: cliflags.EnvHelp(cliflags.PlanLong, perfgate.Settings, cliflags.PerfGateMore),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := perfgate.OptionsFromEnv(stdout, stderr)
			if err != nil {
				return exitstatus.Usage(err)
			}
			p, err := perfgate.PlanFromEnv(cmd.Context(), o)
			if err != nil {
				return exitstatus.Usage(err)
			}
			return p.Write(stdout)
		},
	}
	return []*cobra.Command{gateCmd, planCmd}
}

// exitStatus maps perfgate.Run's status to the error exitCode maps back.
func exitStatus(code int, err error) error {
	switch {
	case code == 2:
		return exitstatus.Usage(errors.Join(err, errors.New("perf gate: INVALID or not comparable (exit 2)")))
	case err != nil:
		return err
	case code == 3:
		return exitstatus.Inconclusive("perf gate: undecided (exit 3): the lines above say why (the runs that would decide, or a key with no baseline and what to do)")
	case code != 0:
		return fmt.Errorf("perf gate: FAIL (exit %d): the report above names the regressions and failed checks", code)
	}
	return nil
}
