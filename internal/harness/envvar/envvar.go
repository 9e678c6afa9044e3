// Package envvar declares the environment variables that configure a
// suite run, once each: the name, the default, what it does, and whether
// `make bench` resets it. Package suite reads them (FromEnv), package
// server reads the server's, package perfgate builds its baseline key
// from them, and the Makefile's SUITE_DEFAULTS unsets exactly the ones
// marked Suite (a test holds the two together). It is a leaf: it imports
// nothing of the project, so that every reader can import it.
package envvar

import (
	"os"
	"strings"
)

// Setting is one environment variable.
type Setting struct {
	// Name is the variable: VLLMPERF_SIZE.
	Name string
	// Default is the value when the variable is unset or blank, as the
	// perf-gate key records it ("" when the reader has its own rule, said
	// in Doc).
	Default string
	// Doc says what it sets, for people.
	Doc string
	// Suite marks a setting that changes what the suite measures or where
	// it writes: make bench and make baseline unset it (the Makefile's
	// SUITE_DEFAULTS), so that a shell's setting never leaks into a
	// committed baseline.
	Suite bool
}

// Lookup is the variable's value without surrounding space, and whether
// it is set to anything but space.
func (s Setting) Lookup() (string, bool) {
	v := strings.TrimSpace(os.Getenv(s.Name))
	return v, v != ""
}

// Get is the variable's value without surrounding space, or Default when
// it is unset or blank.
func (s Setting) Get() string {
	if v, ok := s.Lookup(); ok {
		return v
	}
	return s.Default
}

// The server: which backend, which image or deployment (package server).
var (
	Backend = Setting{Name: "VLLMPERF_BACKEND", Default: "sim", Suite: true,
		Doc: "the server: sim (the in-process simulator), container (an image under Docker) or external (a deployment at VLLMPERF_TARGET)"}
	Image = Setting{Name: "VLLMPERF_IMAGE", Suite: true,
		Doc: "the container backend's image (default: the pinned vLLM image, server.DefaultImage)"}
	Target = Setting{Name: "VLLMPERF_TARGET", Suite: true,
		Doc: "the external backend's deployment: its base URL, on loopback or a name the gateway reaches"}
	Model = Setting{Name: "VLLMPERF_MODEL", Default: "default", Suite: true,
		Doc: "the model every profile serves instead of its own (default: each profile's model)"}
	GPUs = Setting{Name: "VLLMPERF_GPUS",
		Doc: "the GPUs a container gets: all, none, or comma-separated device ids or UUIDs"}
	StartupTimeout = Setting{Name: "VLLMPERF_STARTUP_TIMEOUT",
		Doc: "how long a server may take to become ready, as a Go duration (default: the backend's)"}
	HFCache = Setting{Name: "VLLMPERF_HF_CACHE",
		Doc: "the Hugging Face cache folder mounted into containers"}
	Entrypoint = Setting{Name: "VLLMPERF_ENTRYPOINT",
		Doc: "how the container backend lays out an image's command line: serve (the default), api_server or image (server.WithEntrypoint)"}
	SimBinary = Setting{Name: "VLLMPERF_SIM_BINARY",
		Doc: "a static vllm-sim binary for the simulator's image (default: built from this module)"}
)

// A fleet: where an external deployment's metrics are read (package
// server, docs/deployments.md); the run's --metrics-url, --prometheus and
// --prometheus-selector go over them.
var (
	MetricsURLs = Setting{Name: "VLLMPERF_METRICS_URLS",
		Doc: "the replicas' /metrics URLs of a deployment behind a load balancer, comma-separated (summed as one deployment)"}
	Prometheus = Setting{Name: "VLLMPERF_PROMETHEUS",
		Doc: "a Prometheus server's base URL to read the deployment's vLLM series through, instead of its /metrics"}
	PrometheusSelector = Setting{Name: "VLLMPERF_PROMETHEUS_SELECTOR",
		Doc: `label matchers that pick the deployment's series in Prometheus, e.g. {namespace="llm",service="vllm"}`}
)

// The suite: what it runs and where it writes (package suite).
var (
	Size = Setting{Name: "VLLMPERF_SIZE", Default: "full", Suite: true,
		Doc: "full or quick (default: quick with go test -short, else full)"}
	Profiles = Setting{Name: "VLLMPERF_PROFILES", Default: "all", Suite: true,
		Doc: "comma-separated profiles (default: all built in); not with the external backend, whose deployment has its own flags"}
	Scenarios = Setting{Name: "VLLMPERF_SCENARIOS", Default: "all", Suite: true,
		Doc: "comma-separated scenarios (default: all built in but the opt-in ones, such as slo-capacity)"}
	Thresholds = Setting{Name: "VLLMPERF_THRESHOLDS", Suite: true,
		Doc: "the thresholds file (default: thresholds.yaml at the module root when present)"}
	Results = Setting{Name: "VLLMPERF_RESULTS", Suite: true,
		Doc: "write a results folder there (default: none)"}
	SimArgs = Setting{Name: "VLLMPERF_SIM_ARGS", Suite: true,
		Doc: `extra --sim-* arguments for simulator servers (e.g. "--sim-slowdown 1.1" for a gate test); not part of the perf-gate key`}
	GPUName = Setting{Name: "VLLMPERF_GPU_NAME", Suite: true,
		Doc: "the gpu config line (default: nvidia-smi's name, sim:<preset> for the simulator, else unknown; none in the perf-gate key)"}
	Label = Setting{Name: "VLLMPERF_LABEL",
		Doc: "the name results give an external deployment (default: external)"}
	Strict = Setting{Name: "VLLMPERF_STRICT",
		Doc: "true or false: whether a metric the server does not expose fails its check, over the thresholds file's checks.strict"}
)

// Runner names the machine in the perf-gate key (package perfgate); its
// default is GitHub Actions' $RUNNER_NAME, else the host name.
var Runner = Setting{Name: "VLLMPERF_RUNNER",
	Doc: "the runner's name in the perf-gate key (default: $RUNNER_NAME, else the host name)"}

// All lists every setting, in the order above.
func All() []Setting {
	return []Setting{Backend, Image, Target, Model, GPUs, StartupTimeout, HFCache, Entrypoint, SimBinary,
		MetricsURLs, Prometheus, PrometheusSelector,
		Size, Profiles, Scenarios, Thresholds, Results, SimArgs, GPUName, Label, Strict, Runner}
}
