package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/internal/exitstatus"
	"github.com/vllmperf/vllmperf/internal/harness/history"
	"github.com/vllmperf/vllmperf/internal/harness/history/cli"
)

// newHistoryCommand mounts `vllmperf history` (package cli) with the exit
// statuses of the other commands: bad input 2, nothing testable 3, a
// regression 1.
func newHistoryCommand(stdout, stderr io.Writer) *cobra.Command {
	c := cli.New(stdout, stderr, loadThresholds)
	for _, sub := range c.Commands() {
		run := sub.RunE
		sub.RunE = func(cmd *cobra.Command, args []string) error { return historyErr(run(cmd, args)) }
	}
	return c
}

func historyErr(err error) error {
	var inc *cli.Inconclusive
	switch {
	case errors.Is(err, history.ErrBadInput):
		return exitstatus.Usage(err)
	case errors.As(err, &inc):
		return exitstatus.Inconclusive(inc.Reason)
	}
	return err
}
