package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
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
	// Describe says what runs: the backend, the image, whether it is the
	// simulator. Reports use it for their configuration lines.
	Describe() Description
	// Close stops the server and releases what Run took (for a
	// container: removes it). It is safe to call more than once.
	Close(ctx context.Context) error
}

// Description says what a Server is.
type Description struct {
	// Backend is the backend that started (or reached) the server.
	Backend Kind
	// Image is the container image that runs, "in-process" for the
	// embedded simulator and "external" for a server reached by URL.
	Image string
	// Simulator is true when the server is vllm-sim (in process or in its
	// image), so that the simulator's GPU preset names the hardware.
	Simulator bool
	// Digest is the image's resolved digest (provenance.go): NoDigest for
	// the in-process simulator, Unknown for an external server or when
	// Docker does not say.
	Digest string
	// Env is the server's VLLM_* and OMP_* environment as "K=V ..."
	// (ProvenanceEnv, secrets masked); Unknown for an external server.
	Env string
}

// Kind selects a backend.
type Kind string

// The backends.
const (
	// KindSim runs the simulator (internal/vllmsim) in this process.
	KindSim Kind = "sim"
	// KindContainer runs an image through testcontainers-go.
	KindContainer Kind = "container"
	// KindExternal reaches a deployment that is already running.
	KindExternal Kind = "external"
)

// ParseKind parses a backend name (VLLMPERF_BACKEND, --backend); "" is
// KindSim.
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

// DefaultImage is the pinned vLLM image the container backend runs
// unless told otherwise (WithImage, or another family's Image through
// WithFamily): serverfamily.VLLM's. Pinned so that a baseline is compared
// against the same server; bump it deliberately (and re-baseline).
var DefaultImage = serverfamily.VLLM.Image

// Defaults, documented in docs/gpu-runners.md.
const (
	// SimImage is the image name (WithImage, VLLMPERF_IMAGE) that selects
	// the simulator image built from cmd/vllm-sim.
	SimImage = "sim"
	// defaultStartupTimeout bounds a real vLLM image's start-up: pulling
	// weights into an empty Hugging Face cache, loading them, profiling
	// memory, capturing CUDA graphs. Minutes for a small model.
	defaultStartupTimeout = 20 * time.Minute
	// defaultSimStartupTimeout bounds the simulator's start-up (in process
	// or as a container): it is ready in well under a second.
	defaultSimStartupTimeout = time.Minute
)

// ErrSettings is wrapped by the errors of settings Run or FromEnv cannot
// use (a backend name, a target URL, a GPU list): the caller's input, not
// the server, is wrong.
var ErrSettings = errors.New("server settings")

// ErrNoDocker is wrapped by Run's error when the container backend finds
// no Docker engine, so that a test can skip (outside CI) instead of failing.
var ErrNoDocker = errors.New("no Docker engine")

// ErrKeyRejected is wrapped by the external backend's error when the
// server answers its model list with 401 or 403: it wants an API key that
// was not sent, or refused the one sent (vLLM --api-key). The caller knows
// where the key came from and says so.
var ErrKeyRejected = errors.New("the server refused the API key (none sent, or not the one it was started with: vLLM --api-key)")

// ErrUnhealthy is wrapped by the external backend's error when /health
// does not answer 200, at once or within WithWaitReady's bound.
var ErrUnhealthy = errors.New("/health did not answer 200")

// settingsError is an ErrSettings error with its own message.
type settingsError struct{ err error }

func (e settingsError) Error() string        { return e.err.Error() }
func (e settingsError) Unwrap() error        { return e.err }
func (e settingsError) Is(target error) bool { return target == ErrSettings }

// WrapSettings marks err as an ErrSettings error (the caller's input is
// wrong), keeping its message.
func WrapSettings(err error) error { return settingsError{err} }

func settingsErrorf(format string, a ...any) error {
	return settingsError{fmt.Errorf(format, a...)}
}

// Option sets one of Run's settings. Run applies its defaults first, then
// the options in order: a later option wins.
type Option func(*settings)

// WithBackend selects the backend. Default KindSim.
func WithBackend(k Kind) Option { return func(s *settings) { s.backend = k } }

// WithImage sets the container backend's image: a vLLM image reference,
// or SimImage for the simulator image. Default DefaultImage.
func WithImage(image string) Option { return func(s *settings) { s.image = image } }

// WithTarget sets the external backend's base URL, e.g.
// http://127.0.0.1:8000 (a trailing / or /v1 is dropped).
func WithTarget(url string) Option { return func(s *settings) { s.target = url } }

// WithWaitReady makes the external backend wait up to d for /health to
// answer 200, as a deployment that is still starting answers 503. Default
// 0: /health is checked once. Other backends wait for their own server
// anyway.
func WithWaitReady(d time.Duration) Option { return func(s *settings) { s.waitReady = d } }

// WithModel serves model instead of the profile's (sim, container); for
// the external backend, the model to request, which the server must serve.
func WithModel(model string) Option { return func(s *settings) { s.model = model } }

// WithAPIKey is the bearer token an external server wants on /v1/* (vLLM's
// --api-key); the external backend sends it when it lists the models. It
// never appears in logs or errors.
func WithAPIKey(key string) Option { return func(s *settings) { s.apiKey = secret(key) } }

// WithGateway reaches the external server through g (package gateway:
// extra headers, CA and client certificates); the Server keeps it, and
// GatewayOf gives it to what reaches the server next (the run's client,
// its scrapes). Default: nil, a direct connection. Servers this package
// starts are on loopback and reached directly.
func WithGateway(g *gateway.Gateway) Option { return func(s *settings) { s.gateway = g } }

// WithLog sends progress lines (image build, start-up, time to ready) to
// w, secrets redacted. Default: none.
func WithLog(w io.Writer) Option { return func(s *settings) { s.log = w } }

// WithEntrypoint says how the container backend lays out the command line
// of an image (VLLMPERF_ENTRYPOINT): the name of one of the server
// family's launch layouts (serverfamily.Launch). vLLM's are "serve" (the
// default: `vllm serve MODEL --host 0.0.0.0 --port 8000 FLAGS...`),
// "api_server" (`python3 -m vllm.entrypoints.openai.api_server --model
// MODEL ...`, vLLM images older than 0.5) and "image" (the image's own
// ENTRYPOINT with `--model MODEL --port 8000 FLAGS...`, for a
// vLLM-compatible server that is not vLLM, such as llm-d-inference-sim).
// Run rejects any other name with ErrSettings. The simulator image
// (SimImage) ignores it.
func WithEntrypoint(name string) Option { return func(s *settings) { s.entrypoint = name } }

// WithFamily says what kind of server runs (default serverfamily.Default,
// vLLM): its image and launch layouts for the container backend, and the
// metric names and request extras the run reads from FamilyOf. The
// family's Image replaces the image unless one was chosen (WithImage).
func WithFamily(f *serverfamily.Family) Option {
	return func(s *settings) {
		if f != nil && f.Image != "" && s.image == serverfamily.OrDefault(s.family).Image {
			s.image = f.Image
		}
		s.family = f
	}
}

// The settings FromEnv reads that callers set no other way.

func withGPUs(gpus string) Option               { return func(s *settings) { s.gpus = gpus } }
func withStartupTimeout(d time.Duration) Option { return func(s *settings) { s.startupTimeout = d } }
func withHFCache(dir string) Option             { return func(s *settings) { s.hfCache = dir } }
func withHFToken(token string) Option           { return func(s *settings) { s.hfToken = secret(token) } }
func withSimBinary(path string) Option          { return func(s *settings) { s.simBinary = path } }
func withLeaseWaited(f func(time.Duration)) Option {
	return func(s *settings) { s.leaseWaited = f }
}

// Run starts (or, for the external backend, reaches) a server for p and
// waits until /health answers 200. On error nothing is left running; every
// error reads "start vllm: ...". Secrets never appear in its errors or
// logs.
func Run(ctx context.Context, p profile.Profile, opts ...Option) (Server, error) {
	s := defaultSettings()
	for _, o := range opts {
		o(&s)
	}
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("start vllm: %w", err)
	}
	switch s.backend {
	case KindContainer:
		return runContainer(ctx, s, p)
	case KindExternal:
		if err := refuseEnv(p); err != nil {
			return nil, fmt.Errorf("start vllm: %w", err)
		}
		return runExternal(ctx, s, p)
	default:
		return runSim(ctx, s, p)
	}
}

// endpoint is what every server answers the Server methods with.
type endpoint struct {
	base, model string
	ready       time.Duration
	logs        *lineRing // nil: the server's output is not visible
	desc        Description
	gw          *gateway.Gateway     // how the server is reached; nil: directly
	fam         *serverfamily.Family // what kind of server it is; nil: serverfamily.Default
}

// GatewayOf returns how srv is reached (WithGateway): what every request
// to it goes through, completions, models, tokenize and scrapes alike.
// nil (a direct connection) for a server that does not say.
func GatewayOf(srv Server) *gateway.Gateway {
	if g, ok := srv.(interface{ gateway() *gateway.Gateway }); ok {
		return g.gateway()
	}
	return nil
}

func (e *endpoint) gateway() *gateway.Gateway { return e.gw }

// FamilyOf returns what kind of server srv is (WithFamily): the metric
// names its /metrics uses and the request extras it takes.
// serverfamily.Default for a server that does not say.
func FamilyOf(srv Server) *serverfamily.Family {
	if f, ok := srv.(interface{ family() *serverfamily.Family }); ok {
		return serverfamily.OrDefault(f.family())
	}
	return serverfamily.Default
}

func (e *endpoint) family() *serverfamily.Family { return e.fam }

func (e *endpoint) Describe() Description { return e.desc }

func (e *endpoint) BaseURL() string        { return e.base }
func (e *endpoint) MetricsURL() string     { return e.base + "/metrics" }
func (e *endpoint) Model() string          { return e.model }
func (e *endpoint) ReadyIn() time.Duration { return e.ready }

// Logs returns up to the last n lines the server wrote; nil when they are
// not visible here.
func (e *endpoint) Logs(n int) []string {
	if e.logs == nil {
		return nil
	}
	return e.logs.Last(n)
}
