package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/harness/perfgate"
)

// newPerfGateCommands are `vllmperf perf-gate` and `vllmperf plan`
// (package perfgate; configured by the environment, as make perf-gate).
func newPerfGateCommands(stdout, stderr io.Writer) []*cobra.Command {
	gateCmd := &cobra.Command{
		Use:   "perf-gate",
		Short: "What the perf-gate workflow runs: plan, go test -bench Perf, then gate against the key's baseline (or record it)",
		Long: `perf-gate runs the suite as the environment sets it (VLLMPERF_*, COUNT, VLLMPERF_BUDGET,
RESULTS) and gates it against the baseline of its key in VLLMPERF_BASELINE_STORE; with
none yet, the run becomes it and passes. Exit: 0 pass, 1 regression or failed check,
2 INVALID or not comparable, 3 inconclusive (docs/gate.md, docs/gpu-runners.md).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := perfgate.OptionsFromEnv(stdout, stderr)
			if err != nil {
				return usageError{err}
			}
			return exitStatus(perfgate.Run(cmd.Context(), o))
		},
	}
	planCmd := &cobra.Command{
		Use:   "plan",
		Short: "State what make perf-gate would run: server starts, points, runs, and its time from the last run on the same key",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := perfgate.OptionsFromEnv(stdout, stderr)
			if err != nil {
				return usageError{err}
			}
			p, err := perfgate.PlanFromEnv(cmd.Context(), o)
			if err != nil {
				return usageError{err}
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
		return usageError{errors.Join(err, errors.New("perf gate: exit 2"))}
	case err != nil:
		return err
	case code == 3:
		return inconclusiveError{"perf gate: INCONCLUSIVE"}
	case code != 0:
		return fmt.Errorf("perf gate: exit %d", code)
	}
	return nil
}
