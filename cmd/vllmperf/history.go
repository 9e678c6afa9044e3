package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/historycli"
	"github.com/vllmperf/vllmperf/internal/results/history"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// newHistoryCommand mounts `vllmperf history` (package historycli), whose bad
// input (history.ErrBadInput) is a usage error.
func newHistoryCommand(stdout, stderr io.Writer) *cobra.Command {
	c := historycli.New(stdout, stderr, loadThresholds)
	for _, sub := range c.Commands() {
		run := sub.RunE
		sub.RunE = func(cmd *cobra.Command, args []string) error {
			return historyErr(exitstatus.UntilCanceled(cmd.Context(), func() error { return run(cmd, args) }))
		}
	}
	return c
}

func historyErr(err error) error {
	if errors.Is(err, history.ErrBadInput) {
		return exitstatus.Usage(err)
	}
	return err
}
