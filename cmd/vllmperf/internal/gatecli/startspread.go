// Package gatecli holds command-only code of the gate's subcommands,
// outside cmd/vllmperf's line cap (its tests run through the command).
package gatecli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/gate/startspread"
)

// StartSpread is `vllmperf start-spread`: the server-start
// spread of recordings of the suite, for thresholds.yaml's start_spread.
func StartSpread(stdout io.Writer) *cobra.Command {
	return &cobra.Command{Use: "start-spread BENCH.txt BENCH.txt...", Args: cobra.MinimumNArgs(1),
		Short: "Measure how much server starts differ, from recordings of the suite each on its own start (thresholds.yaml's start_spread; docs/gate.md)",
		Long: `Start-spread measures how much the suite's figures move from one server start
to the next, from two or more recordings of the suite each made on its own
start (baselines of one key recorded on different days, or the runs of a
history store: STORE/runs/*/bench.txt). Only the headline metrics of points
every file has, with at least 2 runs in each, count. It prints the spread per
profile and overall, the value for thresholds.yaml's gate: start_spread, which
the gate allows for two starts' difference (docs/gate.md, "One server start a
side").`,
		RunE: func(_ *cobra.Command, files []string) error {
			var ins []*input.Input
			for _, f := range files {
				in, err := input.ReadFile(f)
				if err != nil {
					return err
				}
				ins = append(ins, in)
			}
			est, err := startspread.EstimateStartSpread(ins)
			if err != nil {
				return err
			}
			_, err = fmt.Fprint(stdout, est)
			return err
		}}
}
