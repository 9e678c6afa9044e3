package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/results/report"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

func newReportCommand(stdout io.Writer) *cobra.Command {
	var store string
	cmd := &cobra.Command{
		Use:   "report RESULTS_DIR",
		Short: "Print a results folder's runs, knees and diagnosis, and write its report.html and report.md",
		Long: `Report reads a results folder written by the suite (make bench, or
go test -bench Perf with VLLMPERF_RESULTS set) and prints one line per run
with its throughput, latency percentiles, error rate and checks, each
concurrency sweep's knee with the numbers behind it, and the diagnosis: the
seed article's bottleneck rules that the measurements fire.

It then writes report.html (charts of throughput and latency against
concurrency, TTFT and TPOT distributions, the server's time series, the gate's
verdict when the folder has gate.json, the checks and the diagnosis; one
self-contained file) and report.md into the folder, from the folder alone.
With --history STORE, report.html also shows the history of the folder's
setup (change points, trends) and history.html is written next to it.
See docs/report.md and docs/history.md.`,
		Example: `  vllmperf report results/20261203T061500Z
  vllmperf report results/20261203T061500Z --history history`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("report takes one argument, the results folder (got %d)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var set *thresholds.Set
			if store != "" {
				var err error
				if set, err = loadThresholds(""); err != nil {
					return exitstatus.Usage(err)
				}
			}
			// Every error of a report is bad input or I/O (a folder that is
			// no results folder, a file that cannot be written): exit 2.
			return exitstatus.Usage(report.Print(stdout, args[0], store, set))
		},
	}
	cmd.Flags().StringVar(&store, "history", "", "a history store (vllmperf history add): add the history of this setup to report.html and write history.html")
	return cmd
}
