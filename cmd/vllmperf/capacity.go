package main

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/internal/orchestrate/capacity"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// newCapacityCommand is `vllmperf capacity` (package capacity).
func newCapacityCommand(stdout, stderr io.Writer) *cobra.Command {
	o := capacity.Options{Log: stderr}
	cmd := &cobra.Command{
		Use:   "capacity",
		Short: "Find the highest request rate (or concurrency) whose goodput meets the SLO",
		Long: `capacity runs a capacity scenario at doubled, then bisected levels until the
highest one where thresholds.yaml's capacity.goodput_min (99%) of requests each
meet its goodput: SLO (a per-request rule) is within capacity.tolerance (10%) of
the lowest where they do not, runs those two once more, and prints the capacity
with the runs behind it, in at most capacity.max_runs runs and capacity.max_time.
Exit 1 when the SLO is out of reach at any load (it failed even at about one
request in flight, where no queue forms), 3 when the runs do
not bracket the capacity within the budget (docs/capacity.md).`,
		Example: "  vllmperf capacity --size quick --sim-args \"--sim-slowdown 1.5\"\n  vllmperf capacity --target http://127.0.0.1:8000 --over concurrency --start 8",
		Args:    cliflags.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.APIKey = os.Getenv(openai.DefaultAPIKeyEnv)
			res, err := o.Run(cmd.Context(), stdout)
			switch {
			case errors.Is(err, capacity.ErrUsage):
				return exitstatus.Usage(err)
			case err == nil && res.OutOfReach:
				return errors.New(res.Reason)
			case err == nil && !res.Found:
				return exitstatus.Inconclusive(res.Reason)
			}
			return exitstatus.Interrupted(cmd.Context(), err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Target, "target", "", "base URL of a running OpenAI-compatible server (nothing is started)")
	f.StringVar(&o.Backend, "backend", "", "server to start: sim, container or external (default sim; also VLLMPERF_BACKEND)")
	f.StringVar(&o.Profile, "profile", "basic", "server profile: a built-in name or a YAML file; not with --target")
	f.StringVar(&o.Model, "model", "", "served model name (default: the profile's, or the target's first)")
	f.StringVar(&o.SimArgs, "sim-args", "", `extra simulator flags, e.g. "--sim-slowdown 1.5"`)
	f.StringVar(&o.Scenario, "scenario", capacity.DefaultScenario, "capacity scenario: its requests, start and run length")
	f.StringVar(&o.Size, "size", "full", "scenario size: full (honest runs) or quick (CI smoke test)")
	f.StringVar(&o.Over, "over", "", "search over rate (open loop, Poisson) or concurrency (closed loop); default the scenario's")
	f.Float64Var(&o.Start, "start", 0, "first level: requests/s, or requests in flight (default the scenario's)")
	f.IntVar(&o.MaxRuns, "max-runs", 0, "most runs of the search (default thresholds.yaml's capacity.max_runs)")
	f.DurationVar(&o.MaxTime, "max-time", 0, "time budget of the search: no run starts after it (default thresholds.yaml's capacity.max_time)")
	f.StringVar(&o.Thresholds, "thresholds", "", "thresholds.yaml with goodput: and capacity: (default ./thresholds.yaml if present, else the built-in)")
	f.BoolVar(&o.Quiet, "quiet", false, "no server log and no per-run lines on stderr")
	cliflags.NoOverloadStop(f, &o.NoOverloadStop)
	cliflags.Gateway(f, &o.Gateway)
	return cmd
}
