package cliflags

import (
	"github.com/spf13/pflag"

	vllmperf "github.com/vllmperf/vllmperf"
	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/gatecli"
	"github.com/vllmperf/vllmperf/internal/gate/render"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
)

// Scrape defines the flags of `vllmperf scrape` on f.
func Scrape(f *pflag.FlagSet, o *ScrapeFlags) {
	f.StringVar(&o.URL, "url", "", "metrics URL of a running server (a bare http://HOST:PORT gets /metrics)")
	f.StringVar(&o.File, "file", "", "a saved exposition (curl -s URL/metrics > FILE)")
	f.BoolVar(&o.JSON, "json", false, "print JSON keyed by V1 metric names instead of a table")
	f.StringVar(&o.APIKeyEnv, "api-key-env", "", "environment variable holding a bearer key for --url (vLLM's --api-key does not guard /metrics; a proxy may)")
	f.DurationVar(&o.Timeout, "timeout", scrape.DefaultTimeout, "deadline of the scrape")
	Gateway(f, &o.Gateway)
}

// Gate defines the flags of `vllmperf gate` on f.
func Gate(f *pflag.FlagSet, o *gatecli.Flags) {
	f.StringVar(&o.Baseline, "baseline", "", "the stored results to compare against (benchfmt)")
	f.StringVar(&o.New, "new", "", "the results to judge (benchfmt)")
	f.StringVar(&o.Thresholds, "thresholds", "", "thresholds.yaml with the gate's settings and limits (default ./"+vllmperf.ThresholdsFile+" if present, else the shipped one, built in); a file given that is missing is an error")
	f.BoolVar(&o.Force, "force", false, "compare even when gpu, model, backend, image or the profiles differ")
	f.StringVar(&o.Filter, "filter", "", "gate only the benchmarks this benchstat (benchproc) query selects, on both sides, e.g. '/profile:basic /scenario:ttft-tpot'; the report says how many were left out")
	f.StringVar(&o.JSON, "json", "", "also write the JSON report to this file, whatever --format says (make bench writes gate.json into the results folder)")
	Output(f, &o.Output, render.Formats)
}

// Upgrade defines the flags of `vllmperf upgrade-gate` on f, with the
// gate's defaults.
func Upgrade(f *pflag.FlagSet, o *UpgradeFlags) {
	f.StringVar(&o.Old, "old", "", `the image to upgrade from: a vLLM image, "sim" or "in-process"`)
	f.StringVar(&o.New, "new", "", `the image to upgrade to: a vLLM image, "sim" or "in-process"`)
	f.StringVar(&o.OldSim, "old-sim-args", "", "--sim-* arguments for OLD only (simulators; VLLMPERF_SIM_ARGS applies to both)")
	f.StringVar(&o.NewSim, "new-sim-args", "", `--sim-* arguments for NEW only, e.g. "--sim-slowdown 1.1"`)
	f.StringSliceVar(&o.Points, "points", upgrade.DefaultPoints, "scenario points, comma-separated; path.Match globs per element, a scenario selects all its points")
	f.StringVar(&o.Size, "size", "", "scenario size: full or quick (default $"+suite.EnvSize+", else full)")
	f.IntVar(&o.MinPairs, "min-pairs", upgrade.DefaultMinPairs, "pairs before the first comparison")
	f.IntVar(&o.MaxPairs, "max-pairs", upgrade.DefaultMaxPairs, "the most pairs: UNKNOWN after that")
	f.StringVar(&o.Servers, "servers", string(upgrade.DefaultServers), "restart: one server at a time, restarted per block (one GPU); keep: both up at once")
	f.StringVar(&o.Thresholds, "thresholds", "", "thresholds.yaml (default $"+suite.EnvThresholds+", else thresholds.yaml at the module root if present, else the shipped one, built in)")
	f.StringVar(&o.Results, "results", "", "results folder (default results/upgrade-<UTC timestamp>)")
	Output(f, &o.Output, render.Formats)
	Traces(f, &o.Traces)
}

// Traces defines upgrade-gate's --torch-profile flags on f.
func Traces(f *pflag.FlagSet, t *TraceFlags) {
	f.BoolVar(&t.On, "torch-profile", false, "when the gate says DIFFERENT, run each regressed point once more on OLD and on NEW with vLLM's torch profiler over a steady window; the traces go to RESULTS/traces/ (index.md lists them)")
	f.DurationVar(&t.Window, "torch-profile-window", torchprof.DefaultWindow, "how long the profiler runs on each regressed point")
}

// Bisect defines the flags of `vllmperf bisect` on f, with the upgrade
// gate's defaults.
func Bisect(f *pflag.FlagSet, o *BisectFlags) {
	f.StringVar(&o.Candidates, "candidates", "", `the builds, one a line, known-good first, known-bad last: an image reference, or "sim" and --sim-* flags (the embedded simulator)`)
	f.StringSliceVar(&o.Points, "points", upgrade.DefaultPoints, "scenario points, comma-separated, as for upgrade-gate")
	f.StringVar(&o.Size, "size", "", "scenario size: full or quick (default $"+suite.EnvSize+", else full)")
	f.IntVar(&o.MinPairs, "min-pairs", upgrade.DefaultMinPairs, "pairs before each step's first comparison")
	f.IntVar(&o.MaxPairs, "max-pairs", upgrade.DefaultMaxPairs, "the most pairs of a step: a step still UNKNOWN then skips its build")
	f.StringVar(&o.Servers, "servers", string(upgrade.DefaultServers), "restart: one server at a time (one GPU); keep: both up at once")
	f.StringVar(&o.Thresholds, "thresholds", "", "thresholds.yaml (default $"+suite.EnvThresholds+", else thresholds.yaml at the module root if present, else the shipped one)")
	f.StringVar(&o.Results, "results", "", "results folder (default results/bisect-<UTC timestamp>); a folder of an earlier bisection reuses its steps' runs")
}
