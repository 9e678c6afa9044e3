package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/harness/merge"
)

func newMergeCommand(stdout io.Writer) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge --out DIR RESULTS_DIR...",
		Short: "Join results folders of processes that ran different profiles into one (docs/gpu-runners.md)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, dirs []string) error {
			res, err := merge.Folders(out, dirs)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "merge: %d runs of profiles %v into %s (left out, one part's only: %v)\n", res.Runs, res.Profiles, res.Out, res.Left)
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "the merged folder, new (required)")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}
