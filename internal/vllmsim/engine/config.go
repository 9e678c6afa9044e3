package engine

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/argcheck"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/clock"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/metrics"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/spec"
)

// Config is the engine's configuration, one field per vLLM serve flag (or
// --sim-* flag) that affects the engine. vllm-sim's flag table writes into
// it and New validates it; both go through Validate, so a value is accepted
// or refused the same way whether it comes from a flag or from Go.
//
// DefaultConfig is vllm-sim's configuration when no flag is given. A
// literal Config is taken as given: pass it through Defaults to fill the
// fields whose zero value is not valid. The three sizes vLLM derives from
// the GPU and the model (MaxNumSeqs, MaxNumBatchedTokens, MaxModelLen) are
// 0 for "derive", in DefaultConfig too.
type Config struct {
	// Model is --model: a preset name or any Hugging Face id (one without a
	// preset runs with DefaultModel's shape). Default DefaultModel.
	Model string
	// ServedModelNames is --served-model-name; the first is the model_name
	// label. Empty: the model.
	ServedModelNames []string
	// MaxNumSeqs is --max-num-seqs, the most running requests. 0: 1024 on
	// GPUs of at least 70 GiB but the A100, else 256.
	MaxNumSeqs int
	// MaxNumBatchedTokens is --max-num-batched-tokens, the per-step token
	// budget. 0: 8192 on GPUs of at least 70 GiB but the A100, else 2048; without
	// chunked prefill at least MaxModelLen.
	MaxNumBatchedTokens int
	// MaxModelLen is --max-model-len. 0: the model's max_position_embeddings.
	MaxModelLen int
	// BlockSize is --block-size, tokens per KV block: one of BlockSizes.
	// Default DefaultBlockSize.
	BlockSize int
	// GPUMemoryUtilization is --gpu-memory-utilization, in (0, 1]. Default
	// DefaultGPUMemoryUtilization.
	GPUMemoryUtilization float64
	// Dtype is --dtype, one of Dtypes. Default "auto".
	Dtype string
	// KVCacheDtype is --kv-cache-dtype, one of KVCacheDtypes. Default "auto"
	// (the weights' dtype).
	KVCacheDtype string
	// EnablePrefixCaching is --[no-]enable-prefix-caching. Default true.
	EnablePrefixCaching bool
	// EnableChunkedPrefill is --[no-]enable-chunked-prefill. Default true.
	EnableChunkedPrefill bool
	// TensorParallelSize is --tensor-parallel-size, 1 to 1024. Default 1.
	TensorParallelSize int
	// APIServerCount is --api-server-count, the API server processes in
	// front of the engine core, 1 to 1024: each an event loop of its own,
	// sharing the requests (the front end's work divides among them).
	// Default 1.
	APIServerCount int
	// SpeculativeConfig is --speculative-config JSON ("" = off).
	SpeculativeConfig string
	// LongPrefillTokenThreshold caps the tokens one prefill may take per step
	// with chunked prefill (--long-prefill-token-threshold; 0 = no cap, vLLM's
	// default), leaving budget for other requests' prefills.
	LongPrefillTokenThreshold int
	// TokenizerMode is --tokenizer-mode, one of TokenizerModes. "slow" and
	// "mistral" detokenize with vLLM's slow incremental detokenizer (the
	// tokenizer is not a Hugging Face fast tokenizer): every output token
	// costs the front end FrontendPreset.SlowDetokenizeFactor times as much.
	// Default "auto".
	TokenizerMode string
	// SwapSpace is --swap-space in GiB (>= 0). It has no effect on the
	// simulation; cache_config_info reports it. Default DefaultSwapSpace.
	SwapSpace float64

	// LoRAConfig are the LoRA flags (lora.go).
	LoRAConfig
	// PoolingConfig are --runner and --task (pooling.go).
	PoolingConfig

	// GPU is --sim-gpu, a GPU preset (any case). Default DefaultGPU.
	GPU string
	// Seed is --sim-seed: seeds output tokens, acceptance draws and jitter.
	Seed int64
	// Jitter is --sim-jitter in [0, 1]: the relative standard deviation of
	// each step's time, which also scales the slow drift of step times and
	// the front end's noise (0 = deterministic). Default DefaultJitter.
	Jitter float64
	// Slowdown is --sim-slowdown: multiplies every step time, in (0, 1e6].
	// Default 1.
	Slowdown float64
	// ColdStart is --sim-cold-start: extra cost paid by the engine's first
	// step (0 = none). Default DefaultColdStart.
	ColdStart time.Duration
	// GuidedOverhead is --sim-guided-decoding-overhead: the time each
	// structured-output (guided) sequence adds to every step it samples
	// in, the grammar's token-mask computation, which runs between
	// scheduling and the forward pass. A zero means none. Default
	// DefaultGuidedOverhead.
	GuidedOverhead time.Duration
	// FixedTTFT and FixedITL are --sim-fixed-ttft and --sim-fixed-itl: with
	// both set, Start runs Fixed, whose timing is exact; one alone is an
	// error.
	FixedTTFT, FixedITL time.Duration
	// MetricsVersion is --sim-metrics-version: the metric names of which
	// vLLM release to expose.
	MetricsVersion MetricsVersion
	// Family is --sim-family: the server whose /metrics names, types,
	// labels and buckets the engine exposes ("" or metrics.VLLM: vLLM's;
	// metrics.SGLang: SGLang's). The flags stay vLLM's either way.
	Family metrics.Family
	// Release is --sim-vllm-version: the vLLM release whose
	// release-dependent costs the engine takes (FrontendPreset.ForRelease),
	// X.Y or X.Y.Z. "": DefaultRelease.
	Release string
	// EOSProbability is the chance that each generated token (after MinTokens,
	// unless IgnoreEOS) is EOS and ends the request with "stop"
	// (--sim-eos-prob, a probability; 0 = never).
	EOSProbability float64

	// Clock replaces the wall clock (tests); nil = real time.
	Clock clock.Clock
	// Offline runs the engine without an API server in front (vLLM's LLM
	// class): requests skip the GPU preset's front-end stage. Calibration
	// uses it for offline benchmarks; vllm-sim never sets it.
	Offline bool
	// GPUSpec, when set, replaces the figures of the preset GPU names
	// (calibration fits presets with it); nil = the preset's own.
	GPUSpec *presets.GPUPreset
}

// Default values of the Config fields whose default is not their zero value.
const (
	DefaultBlockSize            = 16
	DefaultGPUMemoryUtilization = 0.9
	DefaultTensorParallelSize   = 1
	DefaultSlowdown             = 1.0
	// DefaultSwapSpace is vLLM's --swap-space default, 4 GiB.
	DefaultSwapSpace = 4.0
	// DefaultColdStart is the warm-up cost the first engine step pays: with
	// the default preset it reproduces the seed article's 355 ms cold TTFT
	// against ~20–40 ms warm (docs/simulator.md).
	DefaultColdStart = 335 * time.Millisecond
	// DefaultJitter is --sim-jitter's default: real servers' inter-token
	// latencies spread by about 5 % from step to step (P99/P50 of ITL at
	// concurrency 1 ≈ 1.1 in the calibration set; docs/calibration.md).
	DefaultJitter = 0.05
	// DefaultGuidedOverhead is --sim-guided-decoding-overhead's default:
	// 0.5 ms per guided sequence per step: about 10% on the default
	// preset's ~20 ms decode steps at 4 guided sequences, the order of
	// the throughput cost vLLM's structured-output benchmark shows for
	// xgrammar (outlines costs more: raise it to model one).
	DefaultGuidedOverhead = 500 * time.Microsecond
	// maxSlowdown bounds --sim-slowdown (a million times slower is already
	// no server at all).
	maxSlowdown = 1e6
	// maxTensorParallelSize bounds --tensor-parallel-size.
	maxTensorParallelSize = 1024
	// maxAPIServerCount bounds --api-server-count.
	maxAPIServerCount = 1024
)

// The values vLLM accepts for the choice flags.
var (
	// BlockSizes are --block-size's choices.
	BlockSizes = []int{1, 8, 16, 32, 64, 128}
	// Dtypes are --dtype's choices (vLLM's ModelDType).
	Dtypes = []string{"auto", "half", "float16", "bfloat16", "float", "float32"}
	// KVCacheDtypes are --kv-cache-dtype's choices (vLLM's CacheDType, less
	// fp8_ds_mla, which only DeepSeek's MLA attention takes).
	KVCacheDtypes = []string{"auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc"}
	// TokenizerModes are --tokenizer-mode's choices (vLLM's TokenizerMode).
	TokenizerModes = []string{"auto", "slow", "mistral", "custom"}
)

// MetricsVersion selects the metric names the engine exposes.
type MetricsVersion string

// The metric name sets.
const (
	// MetricsCurrent is vLLM V1's names (the zero value).
	MetricsCurrent MetricsVersion = ""
	// MetricsV09 is vLLM 0.9's names where they differ:
	// gpu_cache_usage_perc, gpu_prefix_cache_*, time_per_output_token_seconds.
	MetricsV09 MetricsVersion = "0.9"
)

// metricsVersions are the valid MetricsVersion values.
var metricsVersions = []MetricsVersion{MetricsCurrent, MetricsV09}

// ParseMetricsVersion reads a --sim-metrics-version value: "current" (or
// "") for MetricsCurrent, "0.9" for MetricsV09. Any other text is returned
// as is, for Validate to refuse.
func ParseMetricsVersion(s string) MetricsVersion {
	if s == "current" {
		return MetricsCurrent
	}
	return MetricsVersion(s)
}

// String is the flag's spelling: "current" or "0.9".
func (v MetricsVersion) String() string {
	if v == MetricsCurrent {
		return "current"
	}
	return string(v)
}

// DefaultConfig returns vllm-sim's configuration when no flag is given:
// vLLM's defaults, DefaultGPU, DefaultJitter and DefaultColdStart. MaxNumSeqs,
// MaxNumBatchedTokens and MaxModelLen are 0: New derives them from the GPU
// and the model.
func DefaultConfig() Config {
	return Config{
		Model:                presets.DefaultModel,
		BlockSize:            DefaultBlockSize,
		GPUMemoryUtilization: DefaultGPUMemoryUtilization,
		Dtype:                "auto",
		KVCacheDtype:         "auto",
		TokenizerMode:        "auto",
		EnablePrefixCaching:  true,
		EnableChunkedPrefill: true,
		TensorParallelSize:   DefaultTensorParallelSize,
		APIServerCount:       1,
		SwapSpace:            DefaultSwapSpace,
		GPU:                  presets.DefaultGPU,
		Jitter:               DefaultJitter,
		Slowdown:             DefaultSlowdown,
		ColdStart:            DefaultColdStart,
		GuidedOverhead:       DefaultGuidedOverhead,
	}
}

// Defaults returns cfg with every field whose zero value is not valid set
// to DefaultConfig's value, and the derived sizes (MaxNumSeqs,
// MaxNumBatchedTokens, MaxModelLen) filled in. Fields whose zero value
// means something (the booleans, ColdStart, SwapSpace, Seed, Jitter, the
// fixed timings) are taken as given. Defaults never fails; New reports bad
// values.
func Defaults(cfg Config) Config {
	d := DefaultConfig()
	fill := func(dst *string, def string) {
		if *dst == "" {
			*dst = def
		}
	}
	fill(&cfg.Model, d.Model)
	fill(&cfg.GPU, d.GPU)
	fill(&cfg.Dtype, d.Dtype)
	fill(&cfg.KVCacheDtype, d.KVCacheDtype)
	fill(&cfg.TokenizerMode, d.TokenizerMode)
	if cfg.BlockSize == 0 {
		cfg.BlockSize = d.BlockSize
	}
	if cfg.GPUMemoryUtilization == 0 {
		cfg.GPUMemoryUtilization = d.GPUMemoryUtilization
	}
	if cfg.TensorParallelSize == 0 {
		cfg.TensorParallelSize = d.TensorParallelSize
	}
	if cfg.Slowdown == 0 {
		cfg.Slowdown = d.Slowdown
	}
	if cfg.APIServerCount == 0 {
		cfg.APIServerCount = d.APIServerCount
	}
	return derive(cfg)
}

// bigGPUBytes is vLLM's threshold for its larger scheduler defaults (70 GiB).
const bigGPUBytes = 70 * gib

// bigSchedulerDefaults reports whether vLLM gives g its larger scheduler
// defaults: at least 70 GiB of memory and not an A100, whose throughput the
// larger token budget lowers (vLLM's EngineArgs checks the device name,
// vllm-project/vllm#17885).
func bigSchedulerDefaults(g presets.GPUPreset) bool {
	return g.MemBytes >= bigGPUBytes && !strings.Contains(strings.ToLower(g.Name), "a100")
}

// The scheduler defaults vLLM picks by GPU memory.
const (
	smallGPUMaxNumSeqs          = 256
	smallGPUMaxNumBatchedTokens = 2048
	bigGPUMaxNumSeqs            = 1024
	bigGPUMaxNumBatchedTokens   = 8192
)

// derive fills the sizes vLLM derives from the GPU and the model where
// they are 0.
func derive(cfg Config) Config {
	if cfg.MaxModelLen == 0 {
		m, ok := presets.LookupModel(cfg.Model)
		if !ok {
			m = presets.DefaultModelPreset()
		}
		cfg.MaxModelLen = m.MaxModelLen
	}
	seqs, toks := smallGPUMaxNumSeqs, smallGPUMaxNumBatchedTokens
	if gpu, ok := presets.LookupGPU(cfg.GPU); ok && bigSchedulerDefaults(gpu) {
		seqs, toks = bigGPUMaxNumSeqs, bigGPUMaxNumBatchedTokens
	}
	if cfg.MaxNumSeqs == 0 {
		cfg.MaxNumSeqs = seqs
	}
	if cfg.MaxNumBatchedTokens == 0 {
		cfg.MaxNumBatchedTokens = toks
		if !cfg.EnableChunkedPrefill {
			// vLLM without chunked prefill: max(max_model_len, default).
			cfg.MaxNumBatchedTokens = max(toks, cfg.MaxModelLen)
		}
	}
	return cfg
}

// ModelName is the model_name label and the name clients use by default:
// the first served name, else the model.
func (c Config) ModelName() string {
	if len(c.ServedModelNames) > 0 && c.ServedModelNames[0] != "" {
		return c.ServedModelNames[0]
	}
	return c.Model
}

// ServedNames are the names the API server answers to: ServedModelNames,
// else the model.
func (c Config) ServedNames() []string {
	if len(c.ServedModelNames) > 0 {
		return c.ServedModelNames
	}
	return []string{c.Model}
}

// Validate reports the first value New would refuse: a *FieldError naming
// the flag for a value that is wrong on its own, or vLLM's own message for
// a combination (a KV cache too small for max_model_len, a budget below
// max_num_seqs, ...).
func (c Config) Validate() error {
	_, err := resolve(c)
	return err
}

// FieldError is a Config value the engine refuses. Its text reads as
// argparse's ("argument --block-size: invalid choice: '12' (choose from
// ...)"), what vLLM prints for the same flag.
type FieldError struct {
	// Flag is the vLLM or vllm-sim flag without "--", e.g. "block-size";
	// empty when Msg names the flags itself.
	Flag string
	// Msg says what is wrong and, where it helps, what to give instead.
	Msg string
}

func (e *FieldError) Error() string {
	if e.Flag == "" {
		return e.Msg
	}
	return "argument --" + e.Flag + ": " + e.Msg
}

// fieldCheck is one field's rule: the flag it comes from and the check.
type fieldCheck struct {
	flag  string
	check func(c Config) error
}

// fieldChecks are the rules of the fields on their own, in --help order.
var fieldChecks = []fieldCheck{
	{"model", func(c Config) error {
		if strings.TrimSpace(c.Model) == "" {
			return fmt.Errorf("empty model name (give one such as %s)", presets.DefaultModel)
		}
		return nil
	}},
	{"served-model-name", func(c Config) error {
		for _, n := range c.ServedModelNames {
			if strings.TrimSpace(n) == "" {
				return fmt.Errorf("empty name (give a name such as my-model)")
			}
		}
		return nil
	}},
	{"max-num-seqs", func(c Config) error { return argcheck.IntRange(c.MaxNumSeqs, 0, math.MaxInt) }},
	{"max-num-batched-tokens", func(c Config) error { return argcheck.IntRange(c.MaxNumBatchedTokens, 0, math.MaxInt) }},
	{"max-model-len", func(c Config) error { return argcheck.IntRange(c.MaxModelLen, 0, math.MaxInt) }},
	{"block-size", func(c Config) error { return argcheck.IntChoice(c.BlockSize, BlockSizes) }},
	{"gpu-memory-utilization", func(c Config) error { return argcheck.FloatRange(c.GPUMemoryUtilization, 0, 1, true) }},
	{"dtype", func(c Config) error { return argcheck.Choice(c.Dtype, Dtypes) }},
	{"kv-cache-dtype", func(c Config) error { return argcheck.Choice(c.KVCacheDtype, KVCacheDtypes) }},
	{"tokenizer-mode", func(c Config) error { return argcheck.Choice(c.TokenizerMode, TokenizerModes) }},
	{"long-prefill-token-threshold", func(c Config) error { return argcheck.IntRange(c.LongPrefillTokenThreshold, 0, math.MaxInt) }},
	{"speculative-config", func(c Config) error { _, err := spec.Parse(c.SpeculativeConfig); return err }},
	{"tensor-parallel-size", func(c Config) error { return argcheck.IntRange(c.TensorParallelSize, 1, maxTensorParallelSize) }},
	{"api-server-count", func(c Config) error { return argcheck.IntRange(c.APIServerCount, 1, maxAPIServerCount) }},
	{"swap-space", func(c Config) error { return argcheck.FloatRange(c.SwapSpace, 0, math.Inf(1), false) }},
	{"sim-eos-prob", func(c Config) error { return argcheck.Rate(c.EOSProbability) }},
	{"sim-gpu", func(c Config) error {
		if _, ok := presets.LookupGPU(c.GPU); !ok {
			return fmt.Errorf("unknown GPU preset '%s' (choose from %s)", c.GPU, argcheck.Quote(presets.GPUPresetNames()))
		}
		return nil
	}},
	{"sim-jitter", func(c Config) error { return argcheck.FloatRange(c.Jitter, 0, 1, false) }},
	{"sim-slowdown", func(c Config) error { return argcheck.FloatRange(c.Slowdown, 0, maxSlowdown, true) }},
	{"sim-cold-start", func(c Config) error { return argcheck.NonNegative(c.ColdStart) }},
	{"sim-guided-decoding-overhead", func(c Config) error { return argcheck.NonNegative(c.GuidedOverhead) }},
	{"sim-fixed-ttft", func(c Config) error { return argcheck.NonNegative(c.FixedTTFT) }},
	{"sim-fixed-itl", func(c Config) error { return argcheck.NonNegative(c.FixedITL) }},
	{"sim-vllm-version", func(c Config) error {
		if c.Release == "" {
			return nil
		}
		_, err := presets.ParseRelease(c.Release)
		return err
	}},
	{"sim-family", func(c Config) error { _, err := metrics.ParseFamily(string(c.Family)); return err }},
	{"sim-metrics-version", func(c Config) error {
		names := make([]string, len(metricsVersions))
		for i, v := range metricsVersions {
			if v == c.MetricsVersion {
				return nil
			}
			names[i] = v.String()
		}
		return fmt.Errorf("invalid choice: '%s' (choose from %s)", c.MetricsVersion, argcheck.Quote(names))
	}},
}

// checkFields applies fieldChecks, then the rules that pair fields.
func (c Config) checkFields() error {
	for _, fc := range slices.Concat(fieldChecks, loraChecks, poolingChecks) {
		if err := fc.check(c); err != nil {
			if fe, ok := err.(*FieldError); ok {
				return fe
			}
			return &FieldError{Flag: fc.flag, Msg: err.Error()}
		}
	}
	if (c.FixedTTFT > 0) != (c.FixedITL > 0) {
		return &FieldError{Msg: fmt.Sprintf("arguments --sim-fixed-ttft (%v) and --sim-fixed-itl (%v) go together: set both for exact timing (e.g. --sim-fixed-ttft 50ms --sim-fixed-itl 10ms), or neither for the timing model", c.FixedTTFT, c.FixedITL)}
	}
	return nil
}

// slowDetokenizer reports whether the tokenizer mode detokenizes with
// vLLM's slow incremental detokenizer.
func (c Config) slowDetokenizer() bool {
	return c.TokenizerMode == "slow" || c.TokenizerMode == "mistral"
}

// release is c's Release, DefaultRelease when unset (Validate has refused
// a malformed one).
func (c Config) release() presets.Release {
	r, err := presets.ParseRelease(cmp.Or(c.Release, presets.DefaultRelease))
	if err != nil {
		r, _ = presets.ParseRelease(presets.DefaultRelease)
	}
	return r
}

// fixedTiming reports whether the configuration asks for exact timing.
func (c Config) fixedTiming() bool { return c.FixedTTFT > 0 && c.FixedITL > 0 }
