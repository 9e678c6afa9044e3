// Package server starts a vLLM server for a profile and hands back its
// address. Three backends share one interface:
//
//   - sim: the project's simulator (internal/vllmsim), in process; the
//     default, needs nothing.
//   - container: a container started through testcontainers-go: a real
//     vllm/vllm-openai image on GPU runners, or (VLLMPERF_IMAGE=sim) the
//     simulator built into a FROM scratch image, so that CI exercises the
//     same code path end to end.
//   - external: an existing deployment at VLLMPERF_TARGET (e.g. a vLLM
//     fleet on Kubernetes); nothing is started or stopped.
//
// Configuration comes from the environment (FromEnv) and may be overridden
// field by field by command-line flags. Every error from Start is wrapped
// "start vllm: ...". Secrets (HF_TOKEN) never appear in logs, errors or
// String output.
package server

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/harness/profile"
)

// Server is a running (or reachable) vLLM server.
type Server interface {
	// BaseURL is the server's root, e.g. http://127.0.0.1:PORT (no
	// trailing slash); the OpenAI API is under /v1.
	BaseURL() string
	// MetricsURL is the Prometheus exposition, BaseURL()+"/metrics".
	MetricsURL() string
	// Model is the served model name clients put in requests.
	Model() string
	// ReadyIn is the time from asking for the server to its first
	// healthy /health answer: the cold start, for backends that start one.
	ReadyIn() time.Duration
	// Logs returns up to the last n lines the server wrote (secrets
	// redacted); nil for backends that cannot see the server's output.
	Logs(n int) []string
	// Close stops the server and releases what Start took (for a
	// container: removes it). It is safe to call more than once.
	Close(ctx context.Context) error
}

// Backend starts servers for profiles.
type Backend interface {
	// Start starts (or, for external, reaches) a server for p and waits
	// until it is ready. On error nothing is left running.
	Start(ctx context.Context, p profile.Profile) (Server, error)
	// Kind names the backend.
	Kind() Kind
}

// Kind selects a backend.
type Kind string

// The backends.
const (
	KindSim       Kind = "sim"
	KindContainer Kind = "container"
	KindExternal  Kind = "external"
)

// ParseKind parses a backend name (VLLMPERF_BACKEND, --backend).
func ParseKind(s string) (Kind, error) {
	switch k := Kind(strings.ToLower(strings.TrimSpace(s))); k {
	case "":
		return KindSim, nil
	case KindSim, KindContainer, KindExternal:
		return k, nil
	default:
		return "", fmt.Errorf("unknown backend %q: use sim, container or external", s)
	}
}

// Defaults, documented in docs/gpu-runners.md.
const (
	// DefaultImage is the pinned vLLM image the container backend runs
	// when VLLMPERF_IMAGE is unset. Pinned so that a baseline is compared
	// against the same server; bump it deliberately (and re-baseline).
	DefaultImage = "vllm/vllm-openai:v0.11.0"
	// SimImage is the VLLMPERF_IMAGE value that selects the simulator
	// image built from cmd/vllm-sim.
	SimImage = "sim"
	// DefaultStartupTimeout bounds a real vLLM image's start-up: pulling
	// weights into an empty Hugging Face cache, loading them, profiling
	// memory, capturing CUDA graphs. Minutes for a small model.
	DefaultStartupTimeout = 20 * time.Minute
	// DefaultSimStartupTimeout bounds the simulator's start-up (in process
	// or as a container): it is ready in well under a second.
	DefaultSimStartupTimeout = time.Minute
	// ContainerPort is the port vLLM listens on inside the container.
	ContainerPort = "8000/tcp"
	// ContainerHFCache is where the host's Hugging Face cache is mounted.
	ContainerHFCache = "/root/.cache/huggingface"
	// LabelManaged marks every container this package starts, so that a
	// leak is found with `docker ps -a --filter label=org.vllmperf.managed=true`.
	LabelManaged = "org.vllmperf.managed"
	// LabelProfile carries the profile's name.
	LabelProfile = "org.vllmperf.profile"
	// LabelSession carries the starting process's session id (Session),
	// for Reap.
	LabelSession = "org.vllmperf.session"
	// ReadyMetricUnit is the unit under which callers report ReadyIn as a
	// benchmark metric (b.ReportMetric(s.ReadyIn().Seconds(), ReadyMetricUnit)).
	ReadyMetricUnit = "time-to-ready-s"
)

// Entrypoint says how the container's command line is laid out.
type Entrypoint string

// The entrypoints of vLLM images.
const (
	// EntrypointServe runs `vllm serve MODEL FLAGS...` (vLLM ≥ 0.5; the
	// image's own ENTRYPOINT is overridden so that any tag works).
	EntrypointServe Entrypoint = "serve"
	// EntrypointAPIServer runs `python3 -m vllm.entrypoints.openai.api_server
	// --model MODEL FLAGS...`, for old images without the vllm CLI.
	EntrypointAPIServer Entrypoint = "api_server"
)

// Secret is a string that formats as [REDACTED].
type Secret string

// String redacts the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[REDACTED]"
}

// GoString redacts the secret in %#v.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// Reveal returns the secret itself, for the one place that must pass it on.
func (s Secret) Reveal() string { return string(s) }

// Config selects and configures a backend.
type Config struct {
	// Backend is sim, container or external (VLLMPERF_BACKEND).
	Backend Kind
	// Image is the container image (VLLMPERF_IMAGE): a vLLM image
	// reference, or "sim" for the simulator image. Default DefaultImage.
	Image string
	// GPUs says which GPUs the container gets (VLLMPERF_GPUS): "all",
	// "none", or device ids "0,1". Default: all for a vLLM image, none for
	// the simulator image.
	GPUs string
	// Target is the external server's base URL (VLLMPERF_TARGET).
	Target string
	// StartupTimeout bounds start-up, /health included
	// (VLLMPERF_STARTUP_TIMEOUT, a Go duration such as 30m). Zero means
	// DefaultStartupTimeout for a vLLM image and DefaultSimStartupTimeout
	// for the simulator.
	StartupTimeout time.Duration
	// HFCache is the host's Hugging Face cache, mounted into vLLM
	// containers (VLLMPERF_HF_CACHE, default ~/.cache/huggingface).
	HFCache string
	// HFToken is passed to vLLM containers as HF_TOKEN (env HF_TOKEN).
	HFToken Secret
	// APIKey is the bearer token an external server wants on /v1/* (vLLM's
	// --api-key); the external backend sends it when it lists the models.
	APIKey Secret
	// Model, when set, overrides every profile's model (VLLMPERF_MODEL).
	Model string
	// Entrypoint lays out the container command (VLLMPERF_ENTRYPOINT).
	// Default EntrypointServe.
	Entrypoint Entrypoint
	// SimBinary, when set, is a prebuilt static vllm-sim binary to put in
	// the simulator image instead of building cmd/vllm-sim
	// (VLLMPERF_SIM_BINARY).
	SimBinary string
	// Log receives progress lines (image build, start-up, time to ready);
	// nil discards them. Secrets are redacted.
	Log io.Writer
}

// String describes the configuration with secrets redacted.
func (c Config) String() string {
	return fmt.Sprintf("backend=%s image=%s gpus=%s target=%s startup-timeout=%s hf-cache=%s hf-token=%s model=%s entrypoint=%s",
		c.Backend, c.Image, c.GPUs, c.Target, c.StartupTimeout, c.HFCache, c.HFToken, c.Model, c.Entrypoint)
}

// The environment variables FromEnv reads.
const (
	EnvBackend        = "VLLMPERF_BACKEND"
	EnvImage          = "VLLMPERF_IMAGE"
	EnvGPUs           = "VLLMPERF_GPUS"
	EnvTarget         = "VLLMPERF_TARGET"
	EnvStartupTimeout = "VLLMPERF_STARTUP_TIMEOUT"
	EnvHFCache        = "VLLMPERF_HF_CACHE"
	EnvHFToken        = "HF_TOKEN"
	EnvModel          = "VLLMPERF_MODEL"
	EnvEntrypoint     = "VLLMPERF_ENTRYPOINT"
	EnvSimBinary      = "VLLMPERF_SIM_BINARY"
)

// FromEnv reads the configuration from the environment. Fields a caller
// sets afterwards (from flags) win; call Validate after doing so.
func FromEnv() (Config, error) {
	return fromLookup(os.LookupEnv)
}

func fromLookup(lookup func(string) (string, bool)) (Config, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	var c Config
	var err error
	if c.Backend, err = ParseKind(get(EnvBackend)); err != nil {
		return Config{}, fmt.Errorf("%s: %w", EnvBackend, err)
	}
	c.Image = get(EnvImage)
	c.GPUs = get(EnvGPUs)
	c.Target = get(EnvTarget)
	if s := get(EnvStartupTimeout); s != "" {
		if c.StartupTimeout, err = time.ParseDuration(s); err != nil || c.StartupTimeout <= 0 {
			return Config{}, fmt.Errorf("%s=%q: want a positive Go duration such as 30m or 90s", EnvStartupTimeout, s)
		}
	}
	c.HFCache = get(EnvHFCache)
	if v, _ := lookup(EnvHFToken); v != "" {
		c.HFToken = Secret(strings.TrimSpace(v))
	}
	c.Model = get(EnvModel)
	c.Entrypoint = Entrypoint(get(EnvEntrypoint))
	c.SimBinary = get(EnvSimBinary)
	// The target of an external backend may still come from a flag: New
	// checks that it is there.
	if err := c.validate(false); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate checks the configuration and fills defaults that need no I/O.
func (c *Config) Validate() error { return c.validate(true) }

func (c *Config) validate(complete bool) error {
	var err error
	if c.Backend, err = ParseKind(string(c.Backend)); err != nil {
		return err
	}
	if c.Image == "" {
		c.Image = DefaultImage
	}
	if c.Entrypoint == "" {
		c.Entrypoint = EntrypointServe
	}
	switch c.Entrypoint {
	case EntrypointServe, EntrypointAPIServer:
	default:
		return fmt.Errorf("entrypoint %q: use serve (vllm serve MODEL, vLLM >= 0.5) or api_server (python3 -m vllm.entrypoints.openai.api_server)", c.Entrypoint)
	}
	if c.StartupTimeout < 0 {
		return fmt.Errorf("startup timeout %s: must be positive", c.StartupTimeout)
	}
	if _, err := parseGPUs(c.gpus()); err != nil {
		return err
	}
	if complete && c.Backend == KindExternal && c.Target == "" {
		return fmt.Errorf("backend external needs %s, the server's base URL (e.g. http://127.0.0.1:8000)", EnvTarget)
	}
	return nil
}

// IsSimImage reports whether the container backend runs the simulator.
func (c Config) IsSimImage() bool { return c.Image == SimImage }

// gpus is the effective GPU selection.
func (c Config) gpus() string {
	if c.GPUs != "" {
		return c.GPUs
	}
	if c.IsSimImage() {
		return "none"
	}
	return "all"
}

// startupTimeout is the effective start-up deadline.
func (c Config) startupTimeout() time.Duration {
	switch {
	case c.StartupTimeout > 0:
		return c.StartupTimeout
	case c.Backend == KindSim || c.IsSimImage():
		return DefaultSimStartupTimeout
	default:
		return DefaultStartupTimeout
	}
}

// hfCache is the effective host Hugging Face cache directory.
func (c Config) hfCache() (string, error) {
	if c.HFCache != "" {
		return filepath.Abs(c.HFCache)
	}
	if hf := os.Getenv("HF_HOME"); hf != "" {
		return filepath.Abs(hf)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for the Hugging Face cache: set %s: %w", EnvHFCache, err)
	}
	return filepath.Join(home, ".cache", "huggingface"), nil
}

// logf writes a progress line to c.Log with secrets redacted.
func (c Config) logf(format string, args ...any) {
	if c.Log == nil {
		return
	}
	fmt.Fprintln(c.Log, c.redact(fmt.Sprintf(format, args...)))
}

// redact replaces every secret in s.
func (c Config) redact(s string) string {
	if c.HFToken != "" {
		s = strings.ReplaceAll(s, string(c.HFToken), c.HFToken.String())
	}
	return s
}

// New returns the backend cfg selects (after Validate).
func New(cfg Config) (Backend, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("start vllm: %w", err)
	}
	switch cfg.Backend {
	case KindContainer:
		return &ContainerBackend{cfg: cfg}, nil
	case KindExternal:
		return &ExternalBackend{cfg: cfg}, nil
	default:
		return &SimBackend{cfg: cfg}, nil
	}
}

// Start is shorthand for New(cfg) followed by Start.
func Start(ctx context.Context, cfg Config, p profile.Profile) (Server, error) {
	b, err := New(cfg)
	if err != nil {
		return nil, err
	}
	return b.Start(ctx, p)
}
