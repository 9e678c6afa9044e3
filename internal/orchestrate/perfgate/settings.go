package perfgate

import "github.com/vllmperf/vllmperf/internal/vocab/envvar"

// Settings are the environment settings this package reads itself (its
// key, its budget, its gate), for the help of `vllmperf perf-gate` and
// `vllmperf plan`; the suite's and the server's it reads through package
// suite come on top (docs/settings.md). TestSettingsListed holds the list
// to the package's source.
var Settings = []envvar.Setting{
	envvar.Backend, envvar.Image, envvar.Model, envvar.GPUName, envvar.GPUSets, envvar.Size, envvar.Profiles, envvar.Scenarios,
	envvar.Runner, envvar.Gate, envvar.Count, envvar.Budget, envvar.GateResults, envvar.Baseline, envvar.BaselineRefresh,
	envvar.BaselineStore, envvar.AllowInconclusive, envvar.GateBase, envvar.GateLabels, envvar.GateStep, envvar.Sequential, envvar.Starts,
}
