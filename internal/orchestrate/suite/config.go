// Package suite runs the benchmark suite: every profile × every scenario
// point, with the server started once per profile, the checks of package
// check, the knee of each sweep, and the results folder. perf_test.go
// (BenchmarkPerf, TestPerf*) is a thin shell over it: testing.B and
// testing.T in, metrics and assertions out.
//
// Configuration comes from the environment, so that `go test -bench` runs
// need no flags of their own (package envvar declares the VLLMPERF_
// settings the suite, the server and the perf-gate key share, with their
// defaults and docs):
//
//	VLLMPERF_BACKEND, VLLMPERF_IMAGE, ...  the server (package server)
//	VLLMPERF_SIZE        full or quick (default: quick with -short, else full)
//	VLLMPERF_PROFILES    comma-separated profiles (default: all built in);
//	                     not with the external backend, whose deployment
//	                     has its own flags
//	VLLMPERF_LABEL       the name results give an external deployment
//	                     (default: external)
//	VLLMPERF_STRICT      true or false: whether a metric the server does not
//	                     expose fails its check, over the thresholds file's
//	                     checks.strict (false for a vLLM-compatible server
//	                     that lacks some of vLLM's metrics)
//	VLLMPERF_SCENARIOS   comma-separated scenarios (default: all built in
//	                     but the opt-in ones, such as slo-capacity)
//	VLLMPERF_THRESHOLDS  the thresholds file (default: thresholds.yaml at the
//	                     module root when present)
//	VLLMPERF_RESULTS     write a results folder there (default: none);
//	                     the suites of one go test process share it, and
//	                     a benchmark run leaves its bench.txt there (Main)
//	VLLMPERF_SIM_ARGS    extra --sim-* arguments for simulator servers
//	                     (e.g. --sim-slowdown 1.1 for a gate test)
//	VLLMPERF_TELEMETRY   auto (default), on or off: watch the GPUs during
//	                     each run (package telemetry; auto: the container
//	                     backend on this machine's GPUs)
//	VLLMPERF_DCGM_URL    dcgm-exporter's /metrics, read besides nvidia-smi
//	VLLMPERF_GPU_NAME    the gpu config line (default: nvidia-smi's name,
//	                     sim:<preset> for the simulator, else unknown)
//	VLLMPERF_TORCH_PROFILE  point globs run under vLLM's torch profiler
//	                     (VLLMPERF_TORCH_PROFILE_DIR: the traces' folder)
//	OPENAI_API_KEY       the bearer token for the API and /metrics
package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/telemetry"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// The environment variables FromEnv reads (besides package server's);
// package envvar declares them, with their defaults and docs.
var (
	EnvSize       = envvar.Size.Name
	EnvProfiles   = envvar.Profiles.Name
	EnvScenarios  = envvar.Scenarios.Name
	EnvThresholds = envvar.Thresholds.Name
	EnvResults    = envvar.Results.Name
	EnvSimArgs    = envvar.SimArgs.Name
	EnvGPUName    = envvar.GPUName.Name
	EnvLabel      = envvar.Label.Name
	EnvStrict     = envvar.Strict.Name
)

// EnvAPIKey is read for the API key, as vLLM's benchmark clients do.
const EnvAPIKey = "OPENAI_API_KEY"

// Config is what a suite run needs.
type Config struct {
	// Server selects and configures the backend (the environment's
	// settings, then the caller's).
	Server []server.Option
	// Backend is the backend Server selects. With KindExternal the suite
	// measures one deployment, as it runs: Profiles then holds its one
	// label, and no profile's flags apply.
	Backend server.Kind
	// APIKey is the bearer token requests and scrapes send (the
	// environment's OPENAI_API_KEY when set).
	APIKey string
	// Size sizes every scenario.
	Size scenario.Size
	// Profiles and Scenarios are run in order.
	Profiles  []string
	Scenarios []string
	// Thresholds holds the SLOs and checks' settings; nil is an empty
	// file (thresholds.Empty), FromEnv reads thresholds.yaml.
	Thresholds *thresholds.Set
	// ResultsDir, when set, receives the results folder.
	ResultsDir string
	// SimArgs are appended to simulator servers' command lines.
	SimArgs []string
	// GPUName overrides the gpu config line.
	GPUName string
	// Telemetry says which sources watch the GPUs during a run
	// (VLLMPERF_TELEMETRY, VLLMPERF_DCGM_URL: package telemetry).
	Telemetry telemetry.Settings
	// TorchProfile are the point patterns profiled with vLLM's torch
	// profiler, TraceDir their traces' folder (torchprofile.go).
	TorchProfile []string
	TraceDir     string
}

// StartsServers reports whether the suite starts its servers with the
// profiles' flags (every backend but external). A test that needs that
// asks before it opens a suite, so that it skips before any setup can
// fail.
func (c Config) StartsServers() bool { return c.Backend != server.KindExternal }

// FromEnv reads the configuration from the environment; short selects the
// quick size when VLLMPERF_SIZE is unset (go test -short).
func FromEnv(short bool) (Config, error) {
	var c Config
	var errs []error
	var err error
	if c.Server, err = server.FromEnv(); err != nil {
		errs = append(errs, err)
	}
	c.APIKey = os.Getenv(EnvAPIKey)
	c.Size = scenario.Full
	if short {
		c.Size = scenario.Quick
	}
	if v := strings.TrimSpace(os.Getenv(EnvSize)); v != "" {
		if c.Size, err = scenario.ParseSize(v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", EnvSize, err))
		}
	}
	if c.Backend, err = server.KindFromEnv(); err != nil {
		errs = append(errs, err)
	}
	if c.Profiles, err = profilesFromEnv(c.Backend); err != nil {
		errs = append(errs, err)
	}
	if c.Scenarios, err = listOr(EnvScenarios, scenario.Names(), scenario.DefaultNames()); err != nil {
		errs = append(errs, err)
	}
	if c.Thresholds, err = thresholdsFromEnv(); err != nil {
		errs = append(errs, err)
	}
	if v := strings.TrimSpace(os.Getenv(EnvStrict)); v != "" && c.Thresholds != nil {
		strict, err := strconv.ParseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want true or false", EnvStrict, v))
		} else {
			c.Thresholds = c.Thresholds.WithStrict(strict)
		}
	}
	c.ResultsDir = strings.TrimSpace(os.Getenv(EnvResults))
	c.SimArgs = strings.Fields(os.Getenv(EnvSimArgs))
	c.GPUName = strings.TrimSpace(os.Getenv(EnvGPUName))
	if err := c.torchProfileFromEnv(); err != nil {
		errs = append(errs, err)
	}
	if c.Telemetry, err = telemetry.SettingsFromEnv(); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// profilesFromEnv is VLLMPERF_PROFILES, or for the external backend the
// deployment's one label (VLLMPERF_LABEL): a deployment the suite did not
// start is one subject, whatever profiles exist.
func profilesFromEnv(backend server.Kind) ([]string, error) {
	label := strings.TrimSpace(os.Getenv(EnvLabel))
	if backend != server.KindExternal {
		if label != "" {
			return nil, fmt.Errorf("%s=%s names a deployment the suite did not start, but the backend is %s: unset it, or use VLLMPERF_BACKEND=external", EnvLabel, label, backend)
		}
		return list(EnvProfiles, profile.Names())
	}
	if v := strings.TrimSpace(os.Getenv(EnvProfiles)); v != "" {
		return nil, fmt.Errorf("%s=%s: the external backend measures the deployment at VLLMPERF_TARGET as it runs, with its own flags; profiles are flag sets for servers the suite starts and do not apply: unset %s (name the deployment in results with %s)", EnvProfiles, v, EnvProfiles, EnvLabel)
	}
	if label == "" {
		label = profile.DefaultDeploymentLabel
	}
	if err := profile.CheckLabel(label); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvLabel, err)
	}
	return []string{label}, nil
}

// list reads a comma-separated selection from env, each name one of known.
func list(env string, known []string) ([]string, error) {
	return listOr(env, known, known)
}

// listOr is list whose default (env unset) is def, a part of known.
func listOr(env string, known, def []string) ([]string, error) {
	v := strings.TrimSpace(os.Getenv(env))
	if v == "" {
		return def, nil
	}
	var out []string
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("%s: %q is not built in: choose from %s", env, n, strings.Join(known, ", "))
		}
		out = append(out, n)
	}
	return out, nil
}

// thresholdsFromEnv loads VLLMPERF_THRESHOLDS (an error when it names no
// file), or thresholds.yaml at the module root, or the shipped one.
func thresholdsFromEnv() (*thresholds.Set, error) {
	root, err := moduleRoot()
	if err != nil {
		root = ""
	}
	return thresholds.Resolve(strings.TrimSpace(os.Getenv(EnvThresholds)), root)
}

// moduleRoot finds the directory of go.mod above the working directory
// (go test runs in the package's directory).
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}
