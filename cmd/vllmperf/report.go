package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/harness/render"
	"github.com/vllmperf/vllmperf/internal/harness/results"
)

func newReportCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "report RESULTS_DIR",
		Short: "Print a results folder's table of runs and its sweeps' knees",
		Long: `Report reads a results folder written by the suite (make bench, or
go test -bench Perf with VLLMPERF_RESULTS set) and prints one line per run
with its throughput, latency percentiles, error rate and checks, then each
concurrency sweep's knee with the numbers behind it.`,
		Example: `  vllmperf report results/20261203T061500Z`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("report takes one argument, the results folder (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := results.Read(args[0])
			if err != nil {
				return err
			}
			return render.Text(stdout, s)
		},
	}
}
