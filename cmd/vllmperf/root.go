package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/gatecli"
	"github.com/vllmperf/vllmperf/internal/target/profile"
)

func newRootCommand(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "vllmperf",
		Short: "Benchmark vLLM servers: streamed load, vLLM's latency metrics, regression gates",
		Long: `vllmperf measures a vLLM (or any OpenAI-compatible) server the way vLLM's own
"vllm bench serve" defines TTFT, TPOT, ITL and end-to-end latency, with exact
percentiles, and writes results in vLLM's --save-result JSON format.

Without --target it starts a server itself: the embedded simulator (default),
or a vLLM container on this machine's GPUs (--backend container).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       cliflags.Version(),
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	cliflags.Family(root.PersistentFlags())
	root.AddCommand(newRunCommand(stdout, stderr), newProfilesCommand(stdout), newScrapeCommand(stdout), newGateCommand(stdout, stderr), newReportCommand(stdout), newUpgradeCommand(stdout, stderr), newHistoryCommand(stdout, stderr))
	root.AddCommand(newBisectCommand(stdout, stderr))
	root.AddCommand(newPerfGateCommands(stdout, stderr)...)
	root.AddCommand(newCapacityCommand(stdout, stderr), newMergeCommand(stdout))
	root.AddCommand(gatecli.StartSpread(stdout))
	cliflags.EnforceUsage(root)
	return root
}

func newProfilesCommand(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "profiles",
		Short: "List the built-in server profiles and the vLLM flags each one sets", Long: cliflags.ProfilesLong,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return profile.WriteList(stdout) },
	}
}
