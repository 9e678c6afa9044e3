package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/suggest"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/metrics"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// flagKind is how a flag takes its value.
type flagKind int

const (
	kindValue   flagKind = iota // --flag VALUE or --flag=VALUE
	kindBool                    // --flag (store_true)
	kindNegBool                 // --flag / --no-flag (BooleanOptionalAction)
	kindMulti                   // --flag V1 [V2 ...] (nargs="+")
)

// flagSpec describes one flag: its name without "--", how it takes a value,
// help text, and the setter that reads the value into Options. Setters
// only parse (a number, a duration); whether the value is acceptable is
// Options.Validate's to say, so that a flag and a Go caller meet the same
// rules.
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

// Value parsers of the flag table. Each returns a message fragment; the
// parser prefixes "argument --flag: ".

func str(dst func(*Options) *string) func(*Options, string) error {
	return func(o *Options, v string) error {
		*dst(o) = v
		return nil
	}
}

func intVal(dst func(*Options) *int) func(*Options, string) error {
	return func(o *Options, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("invalid int value: '%s' (want a whole number)", v)
		}
		*dst(o) = n
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

func floatVal(dst func(*Options) *float64) func(*Options, string) error {
	return func(o *Options, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("invalid float value: '%s' (want a number)", v)
		}
		*dst(o) = f
		return nil
	}
}

func rateVal(dst func(*Options) *float64) func(*Options, string) error {
	return func(o *Options, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) {
			return fmt.Errorf("invalid rate: '%s' (want a probability from 0 to 1, e.g. 0.05)", v)
		}
		*dst(o) = f
		return nil
	}
}

func durationVal(dst func(*Options) *time.Duration) func(*Options, string) error {
	return func(o *Options, v string) error {
		if v == "0" {
			*dst(o) = 0
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("invalid duration: '%s' (want a number with a unit, e.g. 500ms, 2s or 1m30s)", v)
		}
		*dst(o) = d
		return nil
	}
}

// choiceMeta is a choice flag's placeholder in --help: {1,8,16}.
func choiceMeta(choices []int) string {
	s := make([]string, len(choices))
	for i, c := range choices {
		s[i] = strconv.Itoa(c)
	}
	return "{" + strings.Join(s, ",") + "}"
}

// flagTable is every accepted flag, in --help order.
var flagTable = slices.Concat(serveFlags, poolingFlags, mmFlags, loraFlags, reasoningFlags, profilerFlags, simFlags, faultFlags)

// serveFlags are vllm serve's flags.
var serveFlags = []flagSpec{
	{name: "model", meta: "MODEL", help: "model name or path (also the first positional argument; default " + presets.DefaultModel + "); timing presets: " + strings.Join(presets.ModelPresetNames(), ", "),
		set: str(func(o *Options) *string { return &o.Model })},
	{name: "served-model-name", kind: kindMulti, meta: "NAME [NAME ...]", help: "model name(s) clients use; the first is the metrics' model_name label (default: the model)",
		setM: func(o *Options, v []string) error { o.ServedModelNames = v; return nil }},
	{name: "host", meta: "HOST", help: "address to listen on (default " + DefaultHost + "; 0.0.0.0 in a container)",
		set: str(func(o *Options) *string { return &o.Host })},
	{name: "port", meta: "PORT", help: fmt.Sprintf("TCP port (default %d; 0 picks a free one)", DefaultPort),
		set: intVal(func(o *Options) *int { return &o.Port })},
	{name: "api-key", meta: "KEY", help: "require 'Authorization: Bearer KEY' on /v1/* (never logged)",
		set: str(func(o *Options) *string { return &o.APIKey })},
	{name: "max-num-seqs", meta: "N", help: "most sequences per engine step (default, or 0: 1024 on >=70 GiB GPUs but the A100, else 256)",
		set: intVal(func(o *Options) *int { return &o.MaxNumSeqs })},
	{name: "max-num-batched-tokens", meta: "N", help: "token budget per engine step (default, or 0: 8192 on >=70 GiB GPUs but the A100, else 2048)",
		set: intVal(func(o *Options) *int { return &o.MaxNumBatchedTokens })},
	{name: "max-model-len", meta: "N", help: "context length: prompt + output tokens (accepts 4096, 4k, 4K; default, or 0: the model's)",
		set: func(o *Options, v string) error {
			n, err := humanInt(v)
			o.MaxModelLen = n
			return err
		}},
	{name: "block-size", meta: choiceMeta(engine.BlockSizes), help: fmt.Sprintf("KV-cache block size in tokens (default %d)", engine.DefaultBlockSize),
		set: intVal(func(o *Options) *int { return &o.BlockSize })},
	{name: "gpu-memory-utilization", meta: "F", help: fmt.Sprintf("share of GPU memory for weights, activations and KV cache, in (0, 1] (default %g)", engine.DefaultGPUMemoryUtilization),
		set: floatVal(func(o *Options) *float64 { return &o.GPUMemoryUtilization })},
	{name: "dtype", meta: "DTYPE", help: "weights dtype: " + strings.Join(engine.Dtypes, ", "),
		set: str(func(o *Options) *string { return &o.Dtype })},
	{name: "kv-cache-dtype", meta: "DTYPE", help: "KV-cache dtype: " + strings.Join(engine.KVCacheDtypes, ", ") + " (auto = --dtype; the fp8 ones take 1 byte)",
		set: str(func(o *Options) *string { return &o.KVCacheDtype })},
	{name: "tokenizer-mode", meta: "MODE", help: "tokenizer mode: " + strings.Join(engine.TokenizerModes, ", ") + " (slow and mistral use vLLM's slow detokenizer: every output token costs the API server more; default auto)",
		set: str(func(o *Options) *string { return &o.TokenizerMode })},
	{name: "long-prefill-token-threshold", meta: "N", help: "with chunked prefill, at most N tokens of one prefill per step (default 0 = no cap)",
		set: intVal(func(o *Options) *int { return &o.LongPrefillTokenThreshold })},
	{name: "enable-prefix-caching", kind: kindNegBool, help: "reuse KV blocks of shared prompt prefixes (default on)",
		setB: func(o *Options, b bool) { o.EnablePrefixCaching = b }},
	{name: "enable-chunked-prefill", kind: kindNegBool, help: "split long prefills across steps (default on)",
		setB: func(o *Options, b bool) { o.EnableChunkedPrefill = b }},
	{name: "speculative-config", meta: "JSON", help: `speculative decoding, e.g. '{"method":"ngram","num_speculative_tokens":5,"prompt_lookup_max":5}'`,
		set: str(func(o *Options) *string { return &o.SpeculativeConfig })},
	{name: "tensor-parallel-size", short: "tp", meta: "N", help: "GPUs per model replica (default 1)",
		set: intVal(func(o *Options) *int { return &o.TensorParallelSize })},
	{name: "api-server-count", meta: "N", help: "API server processes in front of the engine core, each an event loop sharing the requests (default 1)",
		set: intVal(func(o *Options) *int { return &o.APIServerCount })},
	{name: "trust-remote-code", kind: kindNegBool, help: "accepted; no effect in the simulator",
		setB: func(o *Options, b bool) { o.TrustRemoteCode = b }},
	{name: "seed", meta: "N", help: "sampling seed (accepted; faults and timing use --sim-seed)",
		set: int64Val(func(o *Options) *int64 { return &o.SamplingSeed })},
	{name: "swap-space", meta: "GiB", help: fmt.Sprintf("CPU swap space per GPU (default %g; no effect but cache_config_info's swap_space)", engine.DefaultSwapSpace),
		set: floatVal(func(o *Options) *float64 { return &o.SwapSpace })},
	{name: "disable-log-requests", kind: kindBool, help: "do not log each request (the default; deprecated in vLLM)",
		setB: func(o *Options, b bool) { o.LogRequests = !b }},
	{name: "enable-log-requests", kind: kindNegBool, help: "log each request's arrival and end",
		setB: func(o *Options, b bool) { o.LogRequests = b }},
	{name: "disable-log-stats", kind: kindNegBool, help: fmt.Sprintf("do not log engine statistics every %s", StatsInterval),
		setB: func(o *Options, b bool) { o.DisableLogStats = b }},
	{name: "enforce-eager", kind: kindNegBool, help: "accepted; no effect in the simulator",
		setB: func(o *Options, b bool) { o.EnforceEager = b }},
	{name: "show-hidden-metrics-for-version", meta: "X.Y", help: "accepted; see --sim-metrics-version for old metric names",
		set: str(func(o *Options) *string { return &o.ShowHiddenMetrics })},
}

// simFlags are the simulator's own flags.
var simFlags = []flagSpec{
	{name: "sim-eos-prob", meta: "F", help: "chance that each generated token is EOS and ends the request with \"stop\" (after min_tokens, unless ignore_eos; default 0 = never)",
		set: rateVal(func(o *Options) *float64 { return &o.EOSProbability })},
	{name: "sim-gpu", meta: "PRESET", help: "simulated GPU preset: " + strings.Join(presets.GPUPresetNames(), ", ") + " (default " + presets.DefaultGPU + ")",
		set: str(func(o *Options) *string { return &o.GPU })},
	{name: "sim-seed", meta: "N", help: "seed of output tokens, timing jitter and fault injection (default 0)",
		set: int64Val(func(o *Options) *int64 { return &o.Seed })},
	{name: "sim-jitter", meta: "F", help: fmt.Sprintf("relative standard deviation of step-time noise (it also scales the slow drift of step times and the front end's noise), 0 to 1 (default %g; 0 = deterministic)", engine.DefaultJitter),
		set: floatVal(func(o *Options) *float64 { return &o.Jitter })},
	{name: "sim-output-salt", meta: "N", help: fmt.Sprintf("change greedy outputs as another build's numerics would: each one diverges at a token position drawn from its prompt and N (among the first %d) and differs from there on; timing is unchanged (default 0 = none)", OutputSaltWindow),
		set: int64Val(func(o *Options) *int64 { return &o.OutputSalt })},
	{name: "sim-slowdown", meta: "F", help: "multiply every step time by F > 0 (default 1)",
		set: floatVal(func(o *Options) *float64 { return &o.Slowdown })},
	{name: "sim-cold-start", meta: "D", help: "extra latency the engine's first step pays (CUDA warm-up; default " + engine.DefaultColdStart.String() + ", the seed's 355 ms cold TTFT; 0 = none)",
		set: durationVal(func(o *Options) *time.Duration { return &o.ColdStart })},
	{name: "sim-startup", meta: "D", help: "start-up time: /health answers 503 (and /v1/* 503) until it has passed",
		set: durationVal(func(o *Options) *time.Duration { return &o.Startup })},
	{name: "sim-guided-decoding-overhead", meta: "D", help: "time each structured-output sequence (response_format json_schema, a forced tool call) adds to every step it samples in, the grammar's token mask (default " + engine.DefaultGuidedOverhead.String() + ", xgrammar-like; 0 = free)",
		set: durationVal(func(o *Options) *time.Duration { return &o.GuidedOverhead })},
	{name: "sim-fixed-ttft", meta: "D", help: "exact time to first token (with --sim-fixed-itl: bypasses the timing model)",
		set: durationVal(func(o *Options) *time.Duration { return &o.FixedTTFT })},
	{name: "sim-fixed-itl", meta: "D", help: "exact gap between output tokens",
		set: durationVal(func(o *Options) *time.Duration { return &o.FixedITL })},
	{name: "sim-vllm-version", meta: "X.Y.Z", help: "the vLLM release to stand for: its release-dependent costs (a chat request's front-end work, one figure before 0.11 and one from 0.11 on) and GET /version (default " + presets.DefaultRelease + ", or 0.9.2 with --sim-metrics-version 0.9 for /version)",
		set: str(func(o *Options) *string { return &o.Release })},
	{name: "sim-metrics-version", meta: "X.Y", help: "expose the metric names of vLLM X.Y: " + string(engine.MetricsV09) + " keeps gpu_cache_usage_perc and friends (default: current names)",
		set: func(o *Options, v string) error { o.MetricsVersion = engine.ParseMetricsVersion(v); return nil }},
	{name: "sim-family", meta: "NAME", help: "the server family whose /metrics to serve: " + strings.Join(metrics.FamilyNames(), ", ") + " (default " + string(metrics.VLLM) +
		"); sglang serves SGLang's sglang:* series (after " + metrics.SGLangSource + "); the flags and the HTTP API stay vLLM's",
		set: func(o *Options, v string) error { o.Family = metrics.Family(v); return nil }},
}

// faultFlags are the --sim-fault-* flags (faults.go applies them).
var faultFlags = []flagSpec{
	{name: "sim-fault-500-rate", meta: "F", help: "share of requests answered 500 Internal Server Error",
		set: rateVal(func(o *Options) *float64 { return &o.Faults.Rate500 })},
	{name: "sim-fault-429-rate", meta: "F", help: "share of requests answered 429 Too Many Requests",
		set: rateVal(func(o *Options) *float64 { return &o.Faults.Rate429 })},
	{name: "sim-fault-disconnect-rate", meta: "F", help: "share of requests whose connection is cut mid-response (no finish_reason, usage or [DONE])",
		set: rateVal(func(o *Options) *float64 { return &o.Faults.DisconnectRate })},
	{name: "sim-fault-stall", meta: "D", help: "how long a stalled stream pauses mid-way (with --sim-fault-stall-rate)",
		set: durationVal(func(o *Options) *time.Duration { return &o.Faults.Stall })},
	{name: "sim-fault-stall-rate", meta: "F", help: "share of streams that pause once for --sim-fault-stall",
		set: rateVal(func(o *Options) *float64 { return &o.Faults.StallRate })},
	{name: "sim-fault-usage-skew", meta: "N", help: "report usage.completion_tokens N tokens off (N may be negative; never below 0) from what the engine generated and counted in vllm:generation_tokens_total",
		set: intVal(func(o *Options) *int { return &o.Faults.UsageSkew })},
	{name: "sim-fault-metrics-delay", meta: "D", help: "/metrics answers this much later",
		set: durationVal(func(o *Options) *time.Duration { return &o.Faults.MetricsDelay })},
	{name: "sim-fault-metrics-malformed", kind: kindBool, help: "/metrics emits broken exposition text",
		setB: func(o *Options, b bool) { o.Faults.MetricsBroken = b }},
	{name: "sim-fault-drop-metric", meta: "NAME[,NAME...]", help: "leave these metric families out of /metrics, e.g. vllm:kv_cache_usage_perc,vllm:prompt_tokens_total (repeatable)",
		set: func(o *Options, v string) error {
			o.Faults.DropMetrics = append(o.Faults.DropMetrics, strings.Split(v, ",")...)
			return nil
		}},
	{name: "sim-fault-restart-after", meta: "N", help: "after N finished requests the server restarts once: fresh engine, counters back to 0",
		set: intVal(func(o *Options) *int { return &o.Faults.RestartAfter })},
	{name: "sim-fault-die-after", meta: "N", help: "after N finished requests the engine dies: /health 503, requests 500",
		set: intVal(func(o *Options) *int { return &o.Faults.DieAfter })},
}

// ParseArgs parses vllm serve style arguments: an optional positional model,
// "--flag value" and "--flag=value", underscores accepted for dashes
// (--max_num_seqs), --no-NAME for negatable booleans, -tp for
// --tensor-parallel-size. It starts from DefaultOptions and ends with
// Options.Validate. It returns ErrHelp for --help/-h and an *ArgError for
// anything it cannot accept.
func ParseArgs(args []string) (Options, error) {
	p := &argParser{opts: DefaultOptions(), byName: flagsByName()}
	if err := p.parse(args); err != nil {
		return p.opts, err
	}
	return p.opts, p.opts.Validate()
}

// flagsByName indexes flagTable by name and short name.
func flagsByName() map[string]*flagSpec {
	byName := map[string]*flagSpec{}
	for i := range flagTable {
		f := &flagTable[i]
		byName[f.name] = f
		if f.short != "" {
			byName[f.short] = f
		}
	}
	return byName
}

// argParser is one ParseArgs run.
type argParser struct {
	opts       Options
	byName     map[string]*flagSpec
	args       []string
	i          int // the argument being read
	unknown    []string
	positional []string
	modelFlag  string
	given      map[string]string // value flags read, by name (ArgValue)
}

// parse reads every argument, then the positional model.
func (p *argParser) parse(args []string) error {
	p.args = args
	for ; p.i < len(args); p.i++ {
		a := args[p.i]
		switch {
		case a == "--help" || a == "-h":
			return ErrHelp
		case a == "--":
			p.positional = append(p.positional, args[p.i+1:]...)
			p.i = len(args)
		case !strings.HasPrefix(a, "-") || a == "-" || isNumber(a):
			p.positional = append(p.positional, a)
		default:
			if err := p.flag(a); err != nil {
				return err
			}
		}
	}
	return p.finish()
}

// flag reads the flag at args[i] and its value.
func (p *argParser) flag(a string) error {
	name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
	name = strings.ReplaceAll(name, "_", "-")
	dashes := len(a) - len(strings.TrimLeft(a, "-"))
	spec, ok := p.byName[name]
	negated := false
	if !ok && strings.HasPrefix(name, "no-") {
		if s, ok2 := p.byName[strings.TrimPrefix(name, "no-")]; ok2 && s.kind == kindNegBool {
			spec, ok, negated = s, true, true
		}
	}
	if ok && dashes == 1 && spec.short != name {
		ok = false // argparse knows -tp, not -max-num-seqs
	}
	if !ok {
		p.unknown = append(p.unknown, a)
		if !hasVal && p.i+1 < len(p.args) && !strings.HasPrefix(p.args[p.i+1], "-") {
			// argparse would report the value as an unrecognized
			// argument too; keep it with its flag, not as a model.
			p.unknown = append(p.unknown, p.args[p.i+1])
			p.i++
		}
		return nil
	}
	display := "--" + spec.name
	if negated {
		display = "--no-" + spec.name
	}
	switch spec.kind {
	case kindBool, kindNegBool:
		if hasVal {
			return ArgErrorf("argument %s: ignored explicit argument '%s' (%s takes no value; use %s or --no-%s)", display, val, display, "--"+spec.name, spec.name)
		}
		if spec.kind == kindBool && negated {
			return ArgErrorf("unrecognized arguments: %s", a)
		}
		spec.setB(&p.opts, !negated)
		return nil
	case kindMulti:
		return p.multi(spec, display, val, hasVal)
	}
	return p.value(spec, display, val, hasVal)
}

// value reads a kindValue flag's value: after "=", or the next argument.
func (p *argParser) value(spec *flagSpec, display, val string, hasVal bool) error {
	if !hasVal {
		if p.i+1 >= len(p.args) || (strings.HasPrefix(p.args[p.i+1], "-") && !isNumber(p.args[p.i+1])) {
			return ArgErrorf("argument %s: expected one argument (e.g. %s %s)", display, display, spec.meta)
		}
		p.i++
		val = p.args[p.i]
	}
	if spec.name == "model" {
		p.modelFlag = val
	}
	if p.given != nil {
		p.given[spec.name] = val
	}
	if err := spec.set(&p.opts, val); err != nil {
		return ArgErrorf("argument %s: %v", display, err)
	}
	return nil
}

// multi reads a kindMulti flag's values: every following non-flag word.
func (p *argParser) multi(spec *flagSpec, display, val string, hasVal bool) error {
	var vals []string
	if hasVal {
		vals = append(vals, val)
	}
	for p.i+1 < len(p.args) && !strings.HasPrefix(p.args[p.i+1], "-") {
		p.i++
		vals = append(vals, p.args[p.i])
	}
	if len(vals) == 0 {
		return ArgErrorf("argument %s: expected at least one argument (e.g. %s my-model)", display, display)
	}
	if err := spec.setM(&p.opts, vals); err != nil {
		return ArgErrorf("argument %s: %v", display, err)
	}
	return nil
}

// finish takes the positional model and reports unknown arguments.
func (p *argParser) finish() error {
	unknown := p.unknown
	switch {
	case len(p.positional) > 1:
		unknown = append(p.positional[1:], unknown...)
		fallthrough
	case len(p.positional) == 1:
		if p.modelFlag != "" && p.modelFlag != p.positional[0] {
			return ArgErrorf("the model is given twice, as %q (positional) and --model %q: give it once", p.positional[0], p.modelFlag)
		}
		p.opts.Model = p.positional[0]
	}
	if len(unknown) > 0 {
		return unknownError(unknown)
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
	b.WriteString("positional arguments:\n  MODEL    model to serve (default " + presets.DefaultModel + ")\n\noptions:\n")
	b.WriteString("  -h, --help\n        show this help and exit\n")
	for _, group := range []struct {
		title string
		flags []flagSpec
	}{{"", serveFlags}, {"\npooling models:\n", poolingFlags}, {"\nimages:\n", mmFlags}, {"\nLoRA adapters:\n", loraFlags}, {"\nreasoning:\n", reasoningFlags}, {"\nprofiler (vLLM's /start_profile and /stop_profile):\n", profilerFlags}, {"\nsimulator options:\n", simFlags}, {"\nfault injection (seeded by --sim-seed):\n", faultFlags}} {
		b.WriteString(group.title)
		for _, f := range group.flags {
			b.WriteString(usageLine(f))
		}
	}
	return b.String()
}

// usageLine is one flag's entry in Usage.
func usageLine(f flagSpec) string {
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
	return line + "\n        " + f.help + "\n"
}
