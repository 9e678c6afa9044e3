package vllmsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/suggest"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// DefaultModel is the model served when neither a positional model nor
// --model is given (vLLM's own default).
const DefaultModel = "Qwen/Qwen3-0.6B"

// Defaults of the listening address, as vllm serve's (host 127.0.0.1 rather
// than vLLM's all-interfaces default: the simulator listens on loopback
// unless told otherwise, e.g. --host 0.0.0.0 in a container).
const (
	DefaultHost = "127.0.0.1"
	DefaultPort = 8000
)

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

func argErrorf(format string, a ...any) error { return &ArgError{Msg: fmt.Sprintf(format, a...)} }

// Options are the parsed command-line arguments: vLLM serve flags plus the
// simulator's own --sim-* flags.
type Options struct {
	Model            string
	ServedModelNames []string
	Host             string
	Port             int
	// APIKey, when set, is required as "Authorization: Bearer KEY" on /v1/*.
	// It is never logged.
	APIKey string

	MaxNumSeqs           int
	MaxNumBatchedTokens  int
	MaxModelLen          int
	BlockSize            int
	GPUMemoryUtilization float64
	Dtype                string
	KVCacheDtype         string
	EnablePrefixCaching  bool
	EnableChunkedPrefill bool
	SpeculativeConfig    string
	LongPrefillThreshold int
	TensorParallelSize   int
	TrustRemoteCode      bool
	Seed                 int64
	SwapSpace            float64
	LogRequests          bool // --enable-log-requests (vLLM's default is off)
	DisableLogStats      bool
	EnforceEager         bool
	ShowHiddenMetrics    string

	SimGPU            string
	SimSeed           int64
	SimJitter         float64
	SimSlowdown       float64
	SimColdStart      time.Duration
	SimStartup        time.Duration
	SimFixedTTFT      time.Duration
	SimFixedITL       time.Duration
	SimMetricsVersion string
	SimEOSProb        float64

	Faults FaultOptions
}

// FaultOptions are the --sim-fault-* flags. Rates are probabilities in [0, 1]
// drawn per request from a generator seeded by --sim-seed.
type FaultOptions struct {
	Rate500        float64       // --sim-fault-500-rate: answer 500 without running the request
	Rate429        float64       // --sim-fault-429-rate: answer 429 without running the request
	DisconnectRate float64       // --sim-fault-disconnect-rate: cut the connection mid-response
	Stall          time.Duration // --sim-fault-stall: how long a stalled stream pauses
	StallRate      float64       // --sim-fault-stall-rate: share of streams that stall once
	MetricsDelay   time.Duration // --sim-fault-metrics-delay: /metrics answers this late
	MetricsBroken  bool          // --sim-fault-metrics-malformed: /metrics is not valid exposition text
	RestartAfter   int           // --sim-fault-restart-after: restart (fresh engine and counters) after N requests
	DieAfter       int           // --sim-fault-die-after: the engine dies after N requests
}

// flagKind is how a flag takes its value.
type flagKind int

const (
	kindValue   flagKind = iota // --flag VALUE or --flag=VALUE
	kindBool                    // --flag (store_true)
	kindNegBool                 // --flag / --no-flag (BooleanOptionalAction)
	kindMulti                   // --flag V1 [V2 ...] (nargs="+")
)

// flagSpec describes one flag: its name without "--", how it takes a value,
// help text, and the setter that validates and stores the value.
type flagSpec struct {
	name  string
	short string // e.g. "tp" for -tp
	kind  flagKind
	meta  string // value placeholder in --help
	help  string
	set   func(o *Options, v string) error   // kindValue
	setB  func(o *Options, b bool)           // kindBool, kindNegBool
	setM  func(o *Options, v []string) error // kindMulti
}

// Validators shared by the flag table. Each returns a message fragment; the
// parser prefixes "argument --flag: ".

func intIn(lo, hi int, dst func(*Options) *int) func(*Options, string) error {
	return func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid int value: '%s' (want a whole number)", v)
		}
		if n < lo || n > hi {
			return fmt.Errorf("%d is out of range: want %s", n, rangeText(lo, hi))
		}
		*dst(o) = n
		return nil
	}
}

func rangeText(lo, hi int) string {
	if hi == math.MaxInt {
		return fmt.Sprintf("an integer >= %d", lo)
	}
	return fmt.Sprintf("an integer from %d to %d", lo, hi)
}

// humanInt parses vLLM's human-readable sizes for --max-model-len: 4096, 4k
// (4000), 4K (4096), 1m, 1M.
func humanInt(v string) (int, error) {
	bad := fmt.Errorf("invalid int value: '%s' (want a whole number such as 4096, 4k or 4K)", v)
	mult := 1.0
	s := v
	if n := len(s); n > 1 {
		switch s[n-1] {
		case 'k':
			mult = 1e3
		case 'K':
			mult = 1 << 10
		case 'm':
			mult = 1e6
		case 'M':
			mult = 1 << 20
		}
		if mult != 1 {
			s = s[:n-1]
		}
	}
	if mult == 1 {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, bad
		}
		return n, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	n := f * mult
	if err != nil || n != math.Trunc(n) || n > math.MaxInt32 || n < math.MinInt32 {
		return 0, bad
	}
	return int(n), nil
}

func floatIn(lo, hi float64, loOpen bool, dst func(*Options) *float64) func(*Options, string) error {
	return func(o *Options, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("invalid float value: '%s' (want a number)", v)
		}
		if f < lo || f > hi || (loOpen && f == lo) {
			op := ">="
			if loOpen {
				op = ">"
			}
			if math.IsInf(hi, 1) {
				return fmt.Errorf("%s is out of range: want a number %s %g", v, op, lo)
			}
			return fmt.Errorf("%s is out of range: want a number %s %g and <= %g", v, op, lo, hi)
		}
		*dst(o) = f
		return nil
	}
}

func rate(dst func(*Options) *float64) func(*Options, string) error {
	return func(o *Options, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) {
			return fmt.Errorf("invalid rate: '%s' (want a probability from 0 to 1, e.g. 0.05)", v)
		}
		if f < 0 || f > 1 {
			return fmt.Errorf("rate %s is out of range: want a probability from 0 to 1, e.g. 0.05", v)
		}
		*dst(o) = f
		return nil
	}
}

func duration(dst func(*Options) *time.Duration) func(*Options, string) error {
	return func(o *Options, v string) error {
		if v == "0" {
			*dst(o) = 0
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("invalid duration: '%s' (want a number with a unit, e.g. 500ms, 2s or 1m30s)", v)
		}
		if d < 0 {
			return fmt.Errorf("negative duration: '%s' (want 0 or more, e.g. 500ms)", v)
		}
		*dst(o) = d
		return nil
	}
}

func int64Val(dst func(*Options) *int64) func(*Options, string) error {
	return func(o *Options, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("invalid int value: '%s' (want a whole number)", v)
		}
		*dst(o) = n
		return nil
	}
}

func choice(choices []string, dst func(*Options) *string) func(*Options, string) error {
	return func(o *Options, v string) error {
		for _, c := range choices {
			if v == c {
				*dst(o) = v
				return nil
			}
		}
		return fmt.Errorf("invalid choice: '%s' (choose from %s)", v, quoteList(choices))
	}
}

func str(dst func(*Options) *string) func(*Options, string) error {
	return func(o *Options, v string) error {
		*dst(o) = v
		return nil
	}
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "'" + x + "'"
	}
	return strings.Join(q, ", ")
}

// flagTable is every accepted flag, in --help order.
var flagTable = []flagSpec{
	{name: "model", meta: "MODEL", help: "model name or path (also the first positional argument; default " + DefaultModel + "); timing presets: " + strings.Join(engine.ModelPresetNames(), ", "),
		set: str(func(o *Options) *string { return &o.Model })},
	{name: "served-model-name", kind: kindMulti, meta: "NAME [NAME ...]", help: "model name(s) clients use; the first is the metrics' model_name label (default: the model)",
		setM: func(o *Options, v []string) error { o.ServedModelNames = v; return nil }},
	{name: "host", meta: "HOST", help: "address to listen on (default " + DefaultHost + "; 0.0.0.0 in a container)",
		set: str(func(o *Options) *string { return &o.Host })},
	{name: "port", meta: "PORT", help: "TCP port (default 8000; 0 picks a free one)",
		set: intIn(0, 65535, func(o *Options) *int { return &o.Port })},
	{name: "api-key", meta: "KEY", help: "require 'Authorization: Bearer KEY' on /v1/* (never logged)",
		set: str(func(o *Options) *string { return &o.APIKey })},
	{name: "max-num-seqs", meta: "N", help: "most sequences per engine step (default 1024 on >=70 GiB GPUs, else 256)",
		set: intIn(1, math.MaxInt, func(o *Options) *int { return &o.MaxNumSeqs })},
	{name: "max-num-batched-tokens", meta: "N", help: "token budget per engine step (default 8192 on >=70 GiB GPUs, else 2048)",
		set: intIn(1, math.MaxInt, func(o *Options) *int { return &o.MaxNumBatchedTokens })},
	{name: "max-model-len", meta: "N", help: "context length: prompt + output tokens (accepts 4096, 4k, 4K)",
		set: func(o *Options, v string) error {
			n, err := humanInt(v)
			if err != nil {
				return err
			}
			if n < 1 {
				return fmt.Errorf("%d is out of range: want an integer >= 1", n)
			}
			o.MaxModelLen = n
			return nil
		}},
	{name: "block-size", meta: "{1,8,16,32,64,128}", help: "KV-cache block size in tokens (default 16)",
		set: func(o *Options, v string) error {
			switch v {
			case "1", "8", "16", "32", "64", "128":
				o.BlockSize, _ = strconv.Atoi(v) // one of the literals above
				return nil
			}
			return fmt.Errorf("invalid choice: '%s' (choose from '1', '8', '16', '32', '64', '128')", v)
		}},
	{name: "gpu-memory-utilization", meta: "F", help: "share of GPU memory for weights, activations and KV cache, in (0, 1] (default 0.9)",
		set: floatIn(0, 1, true, func(o *Options) *float64 { return &o.GPUMemoryUtilization })},
	{name: "dtype", meta: "DTYPE", help: "weights dtype: auto, half, float16, bfloat16, float, float32",
		set: choice([]string{"auto", "half", "float16", "bfloat16", "float", "float32"}, func(o *Options) *string { return &o.Dtype })},
	{name: "kv-cache-dtype", meta: "DTYPE", help: "KV-cache dtype: auto (= --dtype), bfloat16, fp8, fp8_e4m3, fp8_e5m2",
		set: choice([]string{"auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2"}, func(o *Options) *string { return &o.KVCacheDtype })},
	{name: "long-prefill-token-threshold", meta: "N", help: "with chunked prefill, at most N tokens of one prefill per step (default 0 = no cap)",
		set: intIn(0, math.MaxInt, func(o *Options) *int { return &o.LongPrefillThreshold })},
	{name: "enable-prefix-caching", kind: kindNegBool, help: "reuse KV blocks of shared prompt prefixes (default on)",
		setB: func(o *Options, b bool) { o.EnablePrefixCaching = b }},
	{name: "enable-chunked-prefill", kind: kindNegBool, help: "split long prefills across steps (default on)",
		setB: func(o *Options, b bool) { o.EnableChunkedPrefill = b }},
	{name: "speculative-config", meta: "JSON", help: `speculative decoding, e.g. '{"method":"ngram","num_speculative_tokens":5,"prompt_lookup_max":5}'`,
		set: func(o *Options, v string) error {
			var m map[string]any
			if err := json.Unmarshal([]byte(v), &m); err != nil {
				return fmt.Errorf("invalid JSON object: %v (want e.g. '{\"method\":\"ngram\",\"num_speculative_tokens\":5}')", err)
			}
			o.SpeculativeConfig = v
			return nil
		}},
	{name: "tensor-parallel-size", short: "tp", meta: "N", help: "GPUs per model replica (default 1)",
		set: intIn(1, 1024, func(o *Options) *int { return &o.TensorParallelSize })},
	{name: "trust-remote-code", kind: kindNegBool, help: "accepted; no effect in the simulator",
		setB: func(o *Options, b bool) { o.TrustRemoteCode = b }},
	{name: "seed", meta: "N", help: "sampling seed (accepted; faults and timing use --sim-seed)",
		set: int64Val(func(o *Options) *int64 { return &o.Seed })},
	{name: "swap-space", meta: "GiB", help: "CPU swap space per GPU (accepted; no effect)",
		set: floatIn(0, math.Inf(1), false, func(o *Options) *float64 { return &o.SwapSpace })},
	{name: "disable-log-requests", kind: kindBool, help: "do not log each request (the default; deprecated in vLLM)",
		setB: func(o *Options, b bool) { o.LogRequests = !b }},
	{name: "enable-log-requests", kind: kindNegBool, help: "log each request's arrival and end",
		setB: func(o *Options, b bool) { o.LogRequests = b }},
	{name: "disable-log-stats", kind: kindNegBool, help: "do not log engine statistics every 10 s",
		setB: func(o *Options, b bool) { o.DisableLogStats = b }},
	{name: "enforce-eager", kind: kindNegBool, help: "accepted; no effect in the simulator",
		setB: func(o *Options, b bool) { o.EnforceEager = b }},
	{name: "show-hidden-metrics-for-version", meta: "X.Y", help: "accepted; see --sim-metrics-version for old metric names",
		set: str(func(o *Options) *string { return &o.ShowHiddenMetrics })},

	{name: "sim-eos-prob", meta: "F", help: "chance that each generated token is EOS and ends the request with \"stop\" (after min_tokens, unless ignore_eos; default 0 = never)",
		set: rate(func(o *Options) *float64 { return &o.SimEOSProb })},
	{name: "sim-gpu", meta: "PRESET", help: "simulated GPU preset: " + strings.Join(engine.GPUPresetNames(), ", ") + " (default " + engine.DefaultGPU + ")",
		set: str(func(o *Options) *string { return &o.SimGPU })},
	{name: "sim-seed", meta: "N", help: "seed of timing jitter and fault injection (default 0)",
		set: int64Val(func(o *Options) *int64 { return &o.SimSeed })},
	{name: "sim-jitter", meta: "F", help: "relative standard deviation of step-time noise, 0 to 1 (default 0)",
		set: floatIn(0, 1, false, func(o *Options) *float64 { return &o.SimJitter })},
	{name: "sim-slowdown", meta: "F", help: "multiply every step time by F > 0 (default 1)",
		set: floatIn(0, 1e6, true, func(o *Options) *float64 { return &o.SimSlowdown })},
	{name: "sim-cold-start", meta: "D", help: "extra latency the engine's first step pays (CUDA warm-up; default " + DefaultColdStart.String() + ", the seed's 355 ms cold TTFT; 0 = none)",
		set: duration(func(o *Options) *time.Duration { return &o.SimColdStart })},
	{name: "sim-startup", meta: "D", help: "start-up time: /health answers 503 (and /v1/* 503) until it has passed",
		set: duration(func(o *Options) *time.Duration { return &o.SimStartup })},
	{name: "sim-fixed-ttft", meta: "D", help: "exact time to first token (with --sim-fixed-itl: bypasses the timing model)",
		set: duration(func(o *Options) *time.Duration { return &o.SimFixedTTFT })},
	{name: "sim-fixed-itl", meta: "D", help: "exact gap between output tokens",
		set: duration(func(o *Options) *time.Duration { return &o.SimFixedITL })},
	{name: "sim-metrics-version", meta: "X.Y", help: "expose the metric names of vLLM X.Y: 0.9 keeps gpu_cache_usage_perc and friends (default: current names)",
		set: choice([]string{"current", "0.9"}, func(o *Options) *string { return &o.SimMetricsVersion })},

	{name: "sim-fault-500-rate", meta: "F", help: "share of requests answered 500 Internal Server Error",
		set: rate(func(o *Options) *float64 { return &o.Faults.Rate500 })},
	{name: "sim-fault-429-rate", meta: "F", help: "share of requests answered 429 Too Many Requests",
		set: rate(func(o *Options) *float64 { return &o.Faults.Rate429 })},
	{name: "sim-fault-disconnect-rate", meta: "F", help: "share of requests whose connection is cut mid-response (no finish_reason, usage or [DONE])",
		set: rate(func(o *Options) *float64 { return &o.Faults.DisconnectRate })},
	{name: "sim-fault-stall", meta: "D", help: "how long a stalled stream pauses mid-way (with --sim-fault-stall-rate)",
		set: duration(func(o *Options) *time.Duration { return &o.Faults.Stall })},
	{name: "sim-fault-stall-rate", meta: "F", help: "share of streams that pause once for --sim-fault-stall",
		set: rate(func(o *Options) *float64 { return &o.Faults.StallRate })},
	{name: "sim-fault-metrics-delay", meta: "D", help: "/metrics answers this much later",
		set: duration(func(o *Options) *time.Duration { return &o.Faults.MetricsDelay })},
	{name: "sim-fault-metrics-malformed", kind: kindBool, help: "/metrics emits broken exposition text",
		setB: func(o *Options, b bool) { o.Faults.MetricsBroken = b }},
	{name: "sim-fault-restart-after", meta: "N", help: "after N finished requests the server restarts once: fresh engine, counters back to 0",
		set: intIn(0, math.MaxInt, func(o *Options) *int { return &o.Faults.RestartAfter })},
	{name: "sim-fault-die-after", meta: "N", help: "after N finished requests the engine dies: /health 503, requests 500",
		set: intIn(0, math.MaxInt, func(o *Options) *int { return &o.Faults.DieAfter })},
}

// ParseArgs parses vllm serve style arguments: an optional positional model,
// "--flag value" and "--flag=value", underscores accepted for dashes
// (--max_num_seqs), --no-NAME for negatable booleans, -tp for
// --tensor-parallel-size. It returns ErrHelp for --help/-h and an *ArgError
// for anything it cannot accept.
// DefaultColdStart is the warm-up cost the first engine step pays unless
// --sim-cold-start says otherwise: with the default preset it reproduces the
// seed article's 355 ms cold TTFT against ~20–40 ms warm (docs/simulator.md).
const DefaultColdStart = 335 * time.Millisecond

func ParseArgs(args []string) (Options, error) {
	o := Options{
		Host:                 DefaultHost,
		Port:                 DefaultPort,
		EnablePrefixCaching:  true,
		EnableChunkedPrefill: true,
		SimColdStart:         DefaultColdStart,
	}
	byName := map[string]*flagSpec{}
	for i := range flagTable {
		f := &flagTable[i]
		byName[f.name] = f
		if f.short != "" {
			byName[f.short] = f
		}
	}
	var unknown []string
	var positional []string
	var modelFlag string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--help" || a == "-h" {
			return o, ErrHelp
		}
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" || isNumber(a) {
			positional = append(positional, a)
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.ReplaceAll(name, "_", "-")
		dashes := len(a) - len(strings.TrimLeft(a, "-"))
		spec, ok := byName[name]
		negated := false
		if !ok && strings.HasPrefix(name, "no-") {
			if s, ok2 := byName[strings.TrimPrefix(name, "no-")]; ok2 && s.kind == kindNegBool {
				spec, ok, negated = s, true, true
			}
		}
		if ok && dashes == 1 && spec.short != name {
			ok = false // argparse knows -tp, not -max-num-seqs
		}
		if !ok {
			unknown = append(unknown, a)
			if !hasVal && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				// argparse would report the value as an unrecognized
				// argument too; keep it with its flag, not as a model.
				unknown = append(unknown, args[i+1])
				i++
			}
			continue
		}
		display := "--" + spec.name
		if negated {
			display = "--no-" + spec.name
		}
		switch spec.kind {
		case kindBool, kindNegBool:
			if hasVal {
				return o, argErrorf("argument %s: ignored explicit argument '%s' (%s takes no value; use %s or --no-%s)", display, val, display, "--"+spec.name, spec.name)
			}
			if spec.kind == kindBool && negated {
				return o, argErrorf("unrecognized arguments: %s", a)
			}
			spec.setB(&o, !negated)
		case kindMulti:
			var vals []string
			if hasVal {
				vals = append(vals, val)
			}
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				vals = append(vals, args[i+1])
				i++
			}
			if len(vals) == 0 {
				return o, argErrorf("argument %s: expected at least one argument (e.g. %s my-model)", display, display)
			}
			if err := spec.setM(&o, vals); err != nil {
				return o, argErrorf("argument %s: %v", display, err)
			}
		default:
			if !hasVal {
				if i+1 >= len(args) || (strings.HasPrefix(args[i+1], "-") && !isNumber(args[i+1])) {
					return o, argErrorf("argument %s: expected one argument (e.g. %s %s)", display, display, spec.meta)
				}
				val = args[i+1]
				i++
			}
			if spec.name == "model" {
				modelFlag = val
			}
			if err := spec.set(&o, val); err != nil {
				return o, argErrorf("argument %s: %v", display, err)
			}
		}
	}
	switch {
	case len(positional) > 1:
		unknown = append(positional[1:], unknown...)
		fallthrough
	case len(positional) == 1:
		if modelFlag != "" && modelFlag != positional[0] {
			return o, argErrorf("the model is given twice, as %q (positional) and --model %q: give it once", positional[0], modelFlag)
		}
		o.Model = positional[0]
	}
	if len(unknown) > 0 {
		return o, unknownError(unknown)
	}
	if o.Model == "" {
		o.Model = DefaultModel
	}
	if len(o.ServedModelNames) == 0 {
		o.ServedModelNames = []string{o.Model}
	}
	if o.SimMetricsVersion == "current" {
		o.SimMetricsVersion = ""
	}
	if err := o.validate(); err != nil {
		return o, err
	}
	return o, nil
}

// validate checks combinations of flags.
func (o *Options) validate() error {
	f := o.Faults
	if f.StallRate > 0 && f.Stall == 0 {
		return argErrorf("argument --sim-fault-stall-rate: %g has no effect without --sim-fault-stall (add e.g. --sim-fault-stall 2s)", f.StallRate)
	}
	if f.Stall > 0 && f.StallRate == 0 {
		return argErrorf("argument --sim-fault-stall: %s has no effect without --sim-fault-stall-rate (add e.g. --sim-fault-stall-rate 0.1)", f.Stall)
	}
	if (o.SimFixedTTFT > 0) != (o.SimFixedITL > 0) {
		return argErrorf("arguments --sim-fixed-ttft and --sim-fixed-itl go together (exact timing needs both, e.g. --sim-fixed-ttft 50ms --sim-fixed-itl 10ms)")
	}
	if f.Rate500+f.Rate429 > 1 {
		return argErrorf("arguments --sim-fault-500-rate %g and --sim-fault-429-rate %g add up to more than 1: lower one of them", f.Rate500, f.Rate429)
	}
	for _, n := range o.ServedModelNames {
		if strings.TrimSpace(n) == "" {
			return argErrorf("argument --served-model-name: empty name (give a name such as my-model)")
		}
	}
	return nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// unknownError builds argparse's "unrecognized arguments" message with a
// did-you-mean hint for each flag that is a plausible typo of a known one.
func unknownError(unknown []string) error {
	var hints []string
	for _, u := range unknown {
		if !strings.HasPrefix(u, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(u, "-"), "=")
		if s := suggestFlag(strings.ReplaceAll(name, "_", "-")); s != "" {
			hints = append(hints, "did you mean --"+s+"?")
		}
	}
	msg := "unrecognized arguments: " + strings.Join(unknown, " ") + " (see --help"
	if len(hints) > 0 {
		msg += "; " + strings.Join(hints, " ")
	}
	return &ArgError{Msg: msg + ")"}
}

// suggestFlag returns the known flag nearest to name, or "" when none is
// close enough to be a typo.
func suggestFlag(name string) string {
	names := make([]string, 0, len(flagTable)*2)
	for _, f := range flagTable {
		names = append(names, f.name)
		if f.kind == kindNegBool {
			names = append(names, "no-"+f.name)
		}
	}
	return suggest.Closest(name, names)
}

// Usage returns the --help text.
func Usage() string {
	var b strings.Builder
	b.WriteString("usage: vllm-sim [MODEL] [options]\n\n")
	b.WriteString("A simulated vLLM OpenAI-compatible server (vllm serve flags plus --sim-*).\n")
	b.WriteString("Values go as --flag VALUE or --flag=VALUE; durations take a unit (500ms, 2s).\n\n")
	b.WriteString("positional arguments:\n  MODEL    model to serve (default " + DefaultModel + ")\n\noptions:\n")
	b.WriteString("  -h, --help\n        show this help and exit\n")
	for _, f := range flagTable {
		if f.name == "sim-gpu" {
			b.WriteString("\nsimulator options:\n")
		}
		if f.name == "sim-fault-500-rate" {
			b.WriteString("\nfault injection (seeded by --sim-seed):\n")
		}
		line := "  --" + f.name
		if f.short != "" {
			line = "  -" + f.short + ", --" + f.name
		}
		switch f.kind {
		case kindNegBool:
			line += ", --no-" + f.name
		case kindValue, kindMulti:
			line += " " + f.meta
		}
		b.WriteString(line + "\n        " + f.help + "\n")
	}
	return b.String()
}
