// Package envvar declares vllmperf's environment settings, once each: the
// name, the default, what it does, and whether `make bench` resets it;
// Int, Duration and Bool parse a value with an error naming the variable
// and the fix. Package suite reads them (FromEnv), package server reads
// the server's, package perfgate make perf-gate's and builds its baseline
// key from them, and the Makefile's SUITE_DEFAULTS unsets exactly the
// ones marked Suite (a test holds the two together); docs/settings.md is
// generated from All (a test fails when it drifts). It is a leaf: it
// imports nothing of the project, so that every reader can import it.
//
// Only vllmperf's own settings are declared here. Variables that belong
// to another tool keep their owner's name where they are read, as
// constants of the reading package: GitHub Actions' GITHUB_* and
// RUNNER_NAME, Hugging Face's HF_HOME and HF_TOKEN, OpenAI's
// OPENAI_API_KEY; their meaning and defaults are their owner's. So do
// the test harness's own knobs (VLLMPERF_UPDATE_FIGURES, VLLMPERF_TEST_PHASE,
// the gate-quality recordings' VLLMPERF_QUALITY_*), which configure a
// test, not vllmperf.
package envvar

import (
	"fmt"
	"strconv"
	"time"
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
	// Old is the name the setting had before every name took the
	// VLLMPERF_ prefix (COUNT), or "": Lookup still reads it when Name is
	// unset, and warns once on stderr naming Name (oldname.go).
	Old string
	// Suite marks a setting that changes what the suite measures or where
	// it writes: make bench and make baseline unset it (the Makefile's
	// SUITE_DEFAULTS), so that a shell's setting never leaks into a
	// committed baseline.
	Suite bool
}

// Lookup is the variable's value without surrounding space, and whether
// it is set to anything but space; with Name unset, Old's (warning once).
func (s Setting) Lookup() (string, bool) {
	_, v, ok := s.lookup()
	return v, ok
}

// Get is the variable's value without surrounding space, or Default when
// it is unset or blank.
func (s Setting) Get() string {
	_, v := s.get()
	return v
}

// get is Get with the name it was read under (Name or Old), for an
// error to name the variable the user wrote.
func (s Setting) get() (string, string) {
	if name, v, ok := s.lookup(); ok {
		return name, v
	}
	return s.Name, s.Default
}

// Int is the variable's whole number (Default when unset), at least min;
// an error names the variable, its value and what to write.
func (s Setting) Int(min int) (int, error) {
	name, v := s.get()
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min {
		return 0, fmt.Errorf("%s=%q: want a whole number of at least %d", name, v, min)
	}
	return n, nil
}

// Duration is the variable's positive Go duration (Default when unset; 0
// when both are empty); an error names the variable, its value and what to
// write.
func (s Setting) Duration() (time.Duration, error) {
	name, v := s.get()
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a Go duration such as 2h or 45m", name, v)
	}
	return d, nil
}

// Bool is the variable as true or false (Default when unset; false when
// both are empty): strconv.ParseBool's spellings (true, false, 1, 0);
// anything else is an error naming the variable, not a silent false.
func (s Setting) Bool() (bool, error) {
	name, v := s.get()
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", name, v)
	}
	return b, nil
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
	Family = Setting{Name: "VLLMPERF_FAMILY", Default: "vllm", Suite: true,
		Doc: "the kind of server measured: vllm or sglang (package serverfamily; its profiles, flags, image and /metrics names); vllmperf's --family wins"}
	HFToken = Setting{Name: "VLLMPERF_HF_TOKEN",
		Doc: "the Hugging Face token passed into server containers as HF_TOKEN (default: $HF_TOKEN); never written to a file or a log"}
	SimBinary = Setting{Name: "VLLMPERF_SIM_BINARY",
		Doc: "a static vllm-sim binary for the simulator's image (default: built from this module)"}
	LockDir = Setting{Name: "VLLMPERF_LOCK_DIR",
		Doc: "where the GPU leases live: one folder for every process that may start servers on these GPUs (default: vllmperf-leases in the temporary folder)"}
	Job = Setting{Name: "VLLMPERF_JOB",
		Doc: "the job named on the containers this process starts (label org.vllmperf.job; default: this process); make perf-gate sets it for its go test"}
)

// A gateway in front of an external deployment (package gateway,
// docs/gateways.md); vllmperf run's --header, --ca-cert, --client-cert
// and --client-key go over them.
var (
	Headers = Setting{Name: "VLLMPERF_HEADERS",
		Doc: "extra request headers for a gateway, one 'Name: value' a line ('Name: env:VAR' reads $VAR); values are never printed"}
	CACert = Setting{Name: "VLLMPERF_CA_CERT",
		Doc: "PEM file of the CA that signed the server's TLS certificate, added to the system's roots"}
	ClientCert = Setting{Name: "VLLMPERF_CLIENT_CERT",
		Doc: "PEM client certificate for a gateway that asks for one (mTLS), with VLLMPERF_CLIENT_KEY"}
	ClientKey = Setting{Name: "VLLMPERF_CLIENT_KEY",
		Doc: "PEM private key of VLLMPERF_CLIENT_CERT"}
)

// GPU telemetry during a run (package telemetry).
var (
	Telemetry = Setting{Name: "VLLMPERF_TELEMETRY", Default: "auto",
		Doc: "when runs are watched: auto (a container run with a vLLM image), on (always, with nvidia-smi) or off"}
	DCGMURL = Setting{Name: "VLLMPERF_DCGM_URL",
		Doc: "dcgm-exporter's /metrics URL, read besides nvidia-smi (default: none)"}
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
	TorchProfile = Setting{Name: "VLLMPERF_TORCH_PROFILE",
		Doc: "the points to run once more under vLLM's torch profiler: comma-separated path.Match globs over profile=P/scenario=S/KEY"}
	TorchProfileDir = Setting{Name: "VLLMPERF_TORCH_PROFILE_DIR",
		Doc: "the traces' folder (default: traces/ in the results folder, else vllm-traces); for the external backend, the deployment's own trace folder as this machine sees it"}
	History = Setting{Name: "VLLMPERF_HISTORY",
		Doc: "the history store folder of vllmperf history (default: ./history; --store wins)"}
)

// make perf-gate (package perfgate, docs/gate.md): its count, budget and
// baseline, and the pull-request and matrix settings. Those that were the
// make target's own names (COUNT, RESULTS, ALLOW_INCONCLUSIVE,
// PERF_GATE_*) keep them as Old. RESULTS became VLLMPERF_GATE_RESULTS,
// not VLLMPERF_RESULTS: that is the suite's own results folder (Results),
// which perf-gate sets for each suite process it starts.
var (
	Gate = Setting{Name: "VLLMPERF_GATE",
		Doc: "a gate preset: pr, the pull-request gate's quick subset (default: the whole suite)"}
	Count = Setting{Name: "VLLMPERF_COUNT", Old: "COUNT", Default: "10",
		Doc: "runs of every point, the -count of the suite's go test"}
	Budget = Setting{Name: "VLLMPERF_BUDGET",
		Doc: "a time budget, as a Go duration (2h), that picks VLLMPERF_COUNT from the last run on the same key"}
	GateResults = Setting{Name: "VLLMPERF_GATE_RESULTS", Old: "RESULTS",
		Doc: "the results folder make perf-gate writes (default: results/<UTC timestamp>)"}
	Baseline = Setting{Name: "VLLMPERF_BASELINE",
		Doc: "a baseline file to gate against instead of the store's for this key"}
	BaselineRefresh = Setting{Name: "VLLMPERF_BASELINE_REFRESH", Default: "false",
		Doc: "true: record this run as the key's baseline after it passes"}
	BaselineStore = Setting{Name: "VLLMPERF_BASELINE_STORE",
		Doc: "where make perf-gate keeps one baseline per key (default: vllmperf/baselines in the user cache folder)"}
	AllowInconclusive = Setting{Name: "VLLMPERF_ALLOW_INCONCLUSIVE", Old: "ALLOW_INCONCLUSIVE", Default: "false",
		Doc: "true: an INCONCLUSIVE verdict passes (exit 0 instead of 3)"}
	GateBase = Setting{Name: "VLLMPERF_GATE_BASE", Old: "PERF_GATE_BASE",
		Doc: "the pull request's base commit: a change that touches no measured path skips the run"}
	GateLabels = Setting{Name: "VLLMPERF_GATE_LABELS", Old: "PERF_GATE_LABELS",
		Doc: "the pull request's labels, comma-separated (perf-gate forces a run)"}
	GateStep = Setting{Name: "VLLMPERF_GATE_STEP", Old: "PERF_GATE_STEP",
		Doc: "suite runs the suite into VLLMPERF_GATE_RESULTS and stops (a matrix part); gate gates VLLMPERF_GATE_RESULTS as it is (default: both)"}
	Sequential = Setting{Name: "VLLMPERF_SEQUENTIAL",
		Doc: "pocock or obrien-fleming: the sequential count's spending function, VLLMPERF_COUNT its cap (default: the fixed count)"}
	Starts = Setting{Name: "VLLMPERF_STARTS", Default: "1",
		Doc: "server starts a profile's runs are spread over: VLLMPERF_COUNT/VLLMPERF_STARTS runs in each of that many go test processes, so the gate allows less for two starts' difference (VLLMPERF_COUNT is rounded up to a multiple)"}
	GPUSets = Setting{Name: "VLLMPERF_GPU_SETS",
		Doc: "GPU sets to run profiles on at once: 0,1;2,3 (; between sets), or auto (VLLMPERF_GPUS cut into sets as wide as the widest profile's server)"}
)

// Runner names the machine in the perf-gate key (package perfgate); its
// default is GitHub Actions' $RUNNER_NAME, else the host name.
var Runner = Setting{Name: "VLLMPERF_RUNNER",
	Doc: "the runner's name in the perf-gate key (default: $RUNNER_NAME, else the host name)"}

// All lists every setting, in the order above.
func All() []Setting {
	return []Setting{Backend, Image, Target, Model, GPUs, StartupTimeout, HFCache, HFToken, Family, Entrypoint, SimBinary, LockDir, Job,
		MetricsURLs, Prometheus, PrometheusSelector,
		Headers, CACert, ClientCert, ClientKey,
		Telemetry, DCGMURL,
		Size, Profiles, Scenarios, Thresholds, Results, SimArgs, GPUName, Label, Strict, TorchProfile, TorchProfileDir, History,
		Runner,
		Gate, Count, Budget, GateResults, Baseline, BaselineRefresh, BaselineStore, AllowInconclusive, GateBase, GateLabels, GateStep, Sequential, Starts, GPUSets}
}
