package config

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/argcheck"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// Defaults of the listening address, as vllm serve's (host 127.0.0.1 rather
// than vLLM's all-interfaces default: the simulator listens on loopback
// unless told otherwise, e.g. --host 0.0.0.0 in a container).
const (
	DefaultHost = "127.0.0.1"
	DefaultPort = 8000
)

// maxPort is the largest TCP port.
const maxPort = 65535

// Options are vllm-sim's settings: the engine's (engine.Config, one field
// per vLLM flag that shapes the engine) and the API server's. The flag
// table (ParseArgs) writes into them and Validate checks them, so a value
// is accepted or refused the same way from a flag or from Go.
type Options struct {
	engine.Config

	// Host and Port are --host and --port (0: a free port).
	Host string
	Port int
	// APIKey, when set, is required as "Authorization: Bearer KEY" on /v1/*.
	// It is never logged.
	APIKey string
	// Startup is --sim-startup: /health and /v1/* answer 503 until it has
	// passed since New.
	Startup time.Duration
	// LogRequests is --enable-log-requests (vLLM's default is off).
	LogRequests bool
	// DisableLogStats is --disable-log-stats: no throughput line every 10 s.
	DisableLogStats bool

	// Accepted for vllm serve's sake, with no effect in the simulator:
	// --trust-remote-code, --enforce-eager, --seed (sampling; the simulator
	// draws from --sim-seed) and --show-hidden-metrics-for-version.
	TrustRemoteCode   bool
	EnforceEager      bool
	SamplingSeed      int64
	ShowHiddenMetrics string

	// OutputSalt is --sim-output-salt: non-zero changes every greedy
	// output from a position drawn per prompt on (outputsalt.go), as
	// another build's kernels would; 0 keeps them.
	OutputSalt int64

	// ImageLimit is --limit-mm-per-prompt's image count (nil: the
	// default, DefaultImageLimit; images.go).
	ImageLimit *int

	// ReasoningOptions are --reasoning-parser and its share (reasoning.go).
	ReasoningOptions

	// Faults are the --sim-fault-* flags.
	Faults FaultOptions

	// Profiler is --profiler-config (or VLLM_TORCH_PROFILER_DIR, read by
	// New): see ProfilerOptions.
	Profiler ProfilerOptions
}

// DefaultOptions are vllm-sim's settings when no flag is given:
// engine.DefaultConfig on DefaultHost:DefaultPort, no faults.
func DefaultOptions() Options {
	return Options{Config: engine.DefaultConfig(), Host: DefaultHost, Port: DefaultPort, ReasoningOptions: ReasoningOptions{ReasoningShare: DefaultReasoningShare}}
}

// Validate reports the first setting vllm-sim refuses, as an *ArgError in
// argparse's words: the server's settings, the faults, then the engine's
// (engine.Config.Validate).
func (o Options) Validate() error {
	if err := argcheck.IntRange(o.Port, 0, maxPort); err != nil {
		return ArgErrorf("argument --port: %v", err)
	}
	if err := argcheck.NonNegative(o.Startup); err != nil {
		return ArgErrorf("argument --sim-startup: %v", err)
	}
	if err := o.ReasoningOptions.validate(); err != nil {
		return err
	}
	if err := o.Faults.validate(); err != nil {
		return err
	}
	if err := o.Profiler.validate(); err != nil {
		return err
	}
	return EngineArgError(o.Config.Validate())
}

// EngineArgError turns an engine configuration error into an *ArgError: a
// field's own error as argparse's "argument --flag: ...", a combination
// the engine refuses as "invalid engine configuration: ...".
func EngineArgError(err error) error {
	if err == nil {
		return nil
	}
	var fe *engine.FieldError
	if errors.As(err, &fe) {
		return &ArgError{Msg: fe.Error()}
	}
	return &ArgError{Msg: "invalid engine configuration: " + err.Error()}
}

// ErrHelp is returned by New (and ParseArgs) when the arguments ask for
// --help / -h. The caller prints Usage() and exits 0.
var ErrHelp = errors.New("help requested")

// ArgError is a command-line error: an unknown flag, a missing or invalid
// value. Its text reads like Python argparse's (what vLLM prints) plus a hint
// at the fix. A binary exits 2 on it, as argparse does.
type ArgError struct {
	Msg string
}

func (e *ArgError) Error() string { return e.Msg }

// ArgErrorf makes an *ArgError.
func ArgErrorf(format string, a ...any) error { return &ArgError{Msg: fmt.Sprintf(format, a...)} }

// anyInt is the upper bound of an unbounded integer flag.
const anyInt = math.MaxInt

// StatsInterval is how often Serve logs engine statistics, as vLLM's
// LoggingStatLogger does.
const StatsInterval = 10 * time.Second

// OutputSaltWindow bounds where --sim-output-salt makes a greedy output
// diverge: at a token position drawn per prompt from [0, OutputSaltWindow).
const OutputSaltWindow = 8
