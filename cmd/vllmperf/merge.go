package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/internal/results/merge"
)

func newMergeCommand(stdout io.Writer) *cobra.Command {
	var out string
	cmd := &cobra.Command{Use: "merge --out DIR RESULTS_DIR...", Args: cobra.MinimumNArgs(1), Long: cliflags.MergeLong,
		Short: "Join results folders of processes that ran different profiles into one (docs/gpu-runners.md)",
		RunE: func(_ *cobra.Command, dirs []string) error {
			res, err := merge.Folders(out, dirs)
			if err == nil {
				fmt.Fprintln(stdout, res)
			}
			return err
		}}
	cmd.Flags().StringVar(&out, "out", "", "the merged folder: a new one")
	return cmd
}
