package cliflags

import (
	"github.com/vllmperf/vllmperf/internal/vocab/setting"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// FlagNames are the flags that give the libraries' settings, keyed
// "package.Field" as the libraries name them in their errors (package
// setting): the one place where a library's setting meets its flag.
var FlagNames = map[string]string{
	"history.Alpha":        "--alpha",
	"history.MinChange":    "--min-change",
	"history.MinSize":      "--min-size",
	"history.Permutations": "--permutations",
	"history.Key":          "--key",
	"history.Since":        "--since",
	"history.Until":        "--until",
	"history.Last":         "--last",
	"history.Benchmarks":   "--bench",
	"history.Format":       "--format",
	"history.Baseline":     "--baseline",
	"history.Commit":       "--commit",
	"history.Store":        "--store",

	"merge.Out": "--out",

	"server.MetricsURLs":        "--metrics-url",
	"server.Prometheus":         "--prometheus",
	"server.PrometheusSelector": "--prometheus-selector",
	"server.Target":             "--target",
	"server.Model":              "--model",

	"capacity.Thresholds": "--thresholds",
	"capacity.Scenario":   "--scenario",
	"capacity.Size":       "--size",
	"capacity.Over":       "--over",
	"capacity.Start":      "--start",
	"capacity.MaxRuns":    "--max-runs",
	"capacity.MaxTime":    "--max-time",
	"capacity.Backend":    "--backend",
	"capacity.Target":     "--target",
	"capacity.Profile":    "--profile",
	"capacity.SimArgs":    "--sim-args",
	"capacity.Headers":    "--header",
	"capacity.CACert":     "--ca-cert",
	"capacity.ClientCert": "--client-cert",
	"capacity.ClientKey":  "--client-key",

	"suite.Results":  "--results",
	"verdict.Format": verdict.FormatFlag,
}

// Explain words err's errors about settings (package setting) in the
// flags' names, so that a message names the flag to fix.
func Explain(err error) error { return setting.Rename(err, FlagNames) }
