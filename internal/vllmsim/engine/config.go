package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Default values vLLM uses when a flag is not given.
const (
	DefaultBlockSize            = 16
	DefaultGPUMemoryUtilization = 0.9
	DefaultTensorParallelSize   = 1
	DefaultSlowdown             = 1.0
	// DefaultAcceptanceRate is the per-position draft acceptance probability
	// used when the speculative config has no sim_acceptance_rate.
	DefaultAcceptanceRate = 0.7
	// activationReserveBase is the memory vLLM's profiling run leaves for the
	// CUDA context, CUDA graphs and the non-torch allocations (about 1 GiB).
	activationReserveBase = 1 * gib
	// activationBytesPerTokenHidden × max_num_batched_tokens × hidden is the
	// peak activation memory of the profiling forward pass.
	activationBytesPerTokenHidden = 24
)

// bigGPUBytes is vLLM's threshold for its larger scheduler defaults (70 GiB).
const bigGPUBytes = 70 * gib

// Defaults returns cfg with every unset field set to vLLM's default. The
// booleans (prefix caching, chunked prefill, both on in vLLM V1) are taken as
// given: the caller's flag parsing owns their defaults. Defaults never fails;
// New reports bad values.
func Defaults(cfg Config) Config {
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	if cfg.GPU == "" {
		cfg.GPU = DefaultGPU
	}
	gpu, gpuOK := LookupGPU(cfg.GPU)
	if cfg.MaxNumSeqs == 0 || cfg.MaxNumBatchedTokens == 0 {
		seqs, toks := 256, 2048
		if gpuOK && gpu.MemBytes >= bigGPUBytes {
			seqs, toks = 1024, 8192
		}
		if cfg.MaxNumSeqs == 0 {
			cfg.MaxNumSeqs = seqs
		}
		if cfg.MaxNumBatchedTokens == 0 {
			cfg.MaxNumBatchedTokens = toks
			if !cfg.EnableChunkedPrefill {
				// vLLM without chunked prefill: max(max_model_len, default).
				cfg.MaxNumBatchedTokens = max(toks, defaultMaxModelLen(cfg))
			}
		}
	}
	if cfg.MaxModelLen == 0 {
		cfg.MaxModelLen = defaultMaxModelLen(cfg)
	}
	if cfg.BlockSize == 0 {
		cfg.BlockSize = DefaultBlockSize
	}
	if cfg.GPUMemoryUtilization == 0 {
		cfg.GPUMemoryUtilization = DefaultGPUMemoryUtilization
	}
	if cfg.Dtype == "" {
		cfg.Dtype = "auto"
	}
	if cfg.KVCacheDtype == "" {
		cfg.KVCacheDtype = "auto"
	}
	if cfg.TensorParallelSize == 0 {
		cfg.TensorParallelSize = DefaultTensorParallelSize
	}
	if cfg.Slowdown == 0 {
		cfg.Slowdown = DefaultSlowdown
	}
	return cfg
}

func defaultMaxModelLen(cfg Config) int {
	if cfg.MaxModelLen > 0 {
		return cfg.MaxModelLen
	}
	m, ok := LookupModel(cfg.Model)
	if !ok {
		m = modelPresets[DefaultModel]
	}
	return m.MaxModelLen
}

// SpecConfig is the parsed --speculative-config.
type SpecConfig struct {
	Method               string `json:"method"`
	Model                string `json:"model,omitempty"`
	NumSpeculativeTokens int    `json:"num_speculative_tokens"`
	PromptLookupMax      int    `json:"prompt_lookup_max,omitempty"`
	PromptLookupMin      int    `json:"prompt_lookup_min,omitempty"`
	DraftTPSize          int    `json:"draft_tensor_parallel_size,omitempty"`
	// AcceptanceRate is the simulator's knob (JSON key "sim_acceptance_rate"):
	// the probability that each draft position is accepted given the previous
	// one was. Mean accepted tokens per step = Σ_{i=1..k} rate^i.
	AcceptanceRate float64 `json:"sim_acceptance_rate"`
}

var specMethods = []string{"draft_model", "eagle", "eagle3", "medusa", "mlp_speculator", "mtp", "deepseek_mtp", "ngram", "suffix"}

// specKnownKeys are the keys of vLLM's SpeculativeConfig the simulator
// accepts; the ones it does not model are accepted and ignored.
var specKnownKeys = map[string]bool{
	"method": true, "model": true, "num_speculative_tokens": true, "prompt_lookup_max": true,
	"prompt_lookup_min": true, "draft_tensor_parallel_size": true, "sim_acceptance_rate": true,
	"quantization": true, "max_model_len": true, "revision": true, "code_revision": true,
	"disable_by_batch_size": true, "disable_padded_drafter_batch": true, "speculative_token_tree": true,
	"draft_model": true, "acceptance_method": true, "enforce_eager": true,
}

// ParseSpeculativeConfig parses vLLM's --speculative-config JSON. An empty
// string means speculative decoding is off (nil, nil).
func ParseSpeculativeConfig(s string) (*SpecConfig, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("--speculative-config: invalid JSON (%v); expected e.g. '{\"method\":\"ngram\",\"num_speculative_tokens\":5,\"prompt_lookup_max\":5}'", err)
	}
	var unknown []string
	for k := range raw {
		if !specKnownKeys[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := sortedKeys(specKnownKeys)
		return nil, fmt.Errorf("--speculative-config: unknown key(s) %s; known keys: %s", strings.Join(unknown, ", "), strings.Join(known, ", "))
	}
	var sc SpecConfig
	sc.AcceptanceRate = -1
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	if err := dec.Decode(&struct {
		*SpecConfig
		// ignored keys may have any type
		Quantization any `json:"quantization"`
		MaxModelLen  any `json:"max_model_len"`
		Revision     any `json:"revision"`
		CodeRevision any `json:"code_revision"`
		DisableBy    any `json:"disable_by_batch_size"`
		DisablePad   any `json:"disable_padded_drafter_batch"`
		Tree         any `json:"speculative_token_tree"`
		DraftModel   any `json:"draft_model"`
		AccMethod    any `json:"acceptance_method"`
		Eager        any `json:"enforce_eager"`
	}{SpecConfig: &sc}); err != nil {
		return nil, fmt.Errorf("--speculative-config: %v", err)
	}
	if sc.Method == "" {
		switch {
		case sc.Model == "":
			return nil, fmt.Errorf("--speculative-config: give \"method\" (one of %s) or a draft \"model\"", strings.Join(specMethods, ", "))
		case strings.Contains(strings.ToLower(sc.Model), "eagle3"):
			sc.Method = "eagle3"
		case strings.Contains(strings.ToLower(sc.Model), "eagle"):
			sc.Method = "eagle"
		default:
			sc.Method = "draft_model"
		}
	}
	sc.Method = strings.ToLower(sc.Method)
	okMethod := false
	for _, m := range specMethods {
		okMethod = okMethod || m == sc.Method
	}
	if !okMethod {
		return nil, fmt.Errorf("--speculative-config: unknown method %q; use one of %s", sc.Method, strings.Join(specMethods, ", "))
	}
	if sc.NumSpeculativeTokens <= 0 {
		return nil, fmt.Errorf("--speculative-config: num_speculative_tokens must be a positive integer (got %d)", sc.NumSpeculativeTokens)
	}
	if sc.NumSpeculativeTokens > 32 {
		return nil, fmt.Errorf("--speculative-config: num_speculative_tokens %d is too large for the simulator (at most 32)", sc.NumSpeculativeTokens)
	}
	if (sc.Method == "draft_model" || sc.Method == "eagle" || sc.Method == "eagle3" || sc.Method == "medusa" || sc.Method == "mlp_speculator") && sc.Model == "" {
		return nil, fmt.Errorf("--speculative-config: method %q needs a draft \"model\"", sc.Method)
	}
	if sc.Method == "ngram" {
		if sc.PromptLookupMax == 0 && sc.PromptLookupMin == 0 {
			sc.PromptLookupMax, sc.PromptLookupMin = 5, 5
		} else if sc.PromptLookupMin == 0 {
			sc.PromptLookupMin = sc.PromptLookupMax
		} else if sc.PromptLookupMax == 0 {
			sc.PromptLookupMax = sc.PromptLookupMin
		}
		if sc.PromptLookupMin < 1 || sc.PromptLookupMin > sc.PromptLookupMax {
			return nil, fmt.Errorf("--speculative-config: need 1 <= prompt_lookup_min (%d) <= prompt_lookup_max (%d)", sc.PromptLookupMin, sc.PromptLookupMax)
		}
	}
	if sc.AcceptanceRate == -1 {
		sc.AcceptanceRate = DefaultAcceptanceRate
	}
	if sc.AcceptanceRate < 0 || sc.AcceptanceRate > 1 || math.IsNaN(sc.AcceptanceRate) {
		return nil, fmt.Errorf("--speculative-config: sim_acceptance_rate must be in [0, 1] (got %v)", sc.AcceptanceRate)
	}
	return &sc, nil
}

// resolved is a validated configuration with everything derived from it.
type resolved struct {
	cfg        Config
	gpu        GPUPreset
	model      ModelPreset
	modelNote  string
	spec       *SpecConfig
	draft      ModelPreset // draft model shape (draft_model method)
	weightByte float64     // bytes per weight element
	kvElem     float64     // bytes per KV element
	cacheDtype string      // cache_config_info's cache_dtype
	// per GPU
	weightBytes     float64
	kvBytesPerToken float64 // per GPU (KV heads split by TP)
	numGPUBlocks    int
	memAvail        float64
}

var validBlockSizes = []int{1, 8, 16, 32, 64, 128}

func resolve(cfg Config) (*resolved, error) {
	cfg = Defaults(cfg)
	r := &resolved{cfg: cfg}
	gpu, ok := LookupGPU(cfg.GPU)
	if !ok {
		return nil, fmt.Errorf("unknown GPU preset %q (--sim-gpu); use one of %s", cfg.GPU, strings.Join(GPUPresetNames(), ", "))
	}
	r.gpu = gpu
	r.cfg.GPU = gpu.Name
	m, ok := LookupModel(cfg.Model)
	if !ok {
		m = modelPresets[DefaultModel]
		r.modelNote = fmt.Sprintf("model %q has no preset: simulating it with the shape of %s (presets: %s)", cfg.Model, DefaultModel, strings.Join(ModelPresetNames(), ", "))
	}
	r.model = m
	switch strings.ToLower(cfg.Dtype) {
	case "auto", "half", "float16", "bfloat16", "fp16", "bf16":
		r.weightByte = 2
	case "float", "float32":
		r.weightByte = 4
	default:
		return nil, fmt.Errorf("invalid --dtype %q; use one of auto, half, float16, bfloat16, float, float32", cfg.Dtype)
	}
	switch strings.ToLower(cfg.KVCacheDtype) {
	case "auto":
		r.kvElem, r.cacheDtype = r.weightByte, "auto"
	case "bfloat16":
		r.kvElem, r.cacheDtype = 2, "bfloat16"
	case "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc":
		r.kvElem, r.cacheDtype = 1, strings.ToLower(cfg.KVCacheDtype)
	default:
		return nil, fmt.Errorf("invalid --kv-cache-dtype %q; use one of auto, bfloat16, fp8, fp8_e4m3, fp8_e5m2, fp8_inc", cfg.KVCacheDtype)
	}
	if cfg.MaxNumSeqs < 1 {
		return nil, fmt.Errorf("--max-num-seqs must be >= 1 (got %d)", cfg.MaxNumSeqs)
	}
	if cfg.MaxNumBatchedTokens < 1 {
		return nil, fmt.Errorf("--max-num-batched-tokens must be >= 1 (got %d)", cfg.MaxNumBatchedTokens)
	}
	if cfg.MaxNumBatchedTokens < cfg.MaxNumSeqs {
		return nil, fmt.Errorf("max_num_batched_tokens (%d) must be greater than or equal to max_num_seqs (%d); raise --max-num-batched-tokens or lower --max-num-seqs", cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs)
	}
	if cfg.MaxModelLen < 1 {
		return nil, fmt.Errorf("--max-model-len must be >= 1 (got %d)", cfg.MaxModelLen)
	}
	if r.modelNote == "" && cfg.MaxModelLen > m.MaxModelLen {
		return nil, fmt.Errorf("user-specified max_model_len (%d) is greater than the derived max_model_len (max_position_embeddings=%d in model's config.json); lower --max-model-len", cfg.MaxModelLen, m.MaxModelLen)
	}
	if !cfg.EnableChunkedPrefill && cfg.MaxNumBatchedTokens < cfg.MaxModelLen {
		return nil, fmt.Errorf("max_num_batched_tokens (%d) is smaller than max_model_len (%d). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len (or enable chunked prefill)", cfg.MaxNumBatchedTokens, cfg.MaxModelLen)
	}
	if cfg.LongPrefillTokenThreshold < 0 {
		return nil, fmt.Errorf("--long-prefill-token-threshold must be >= 0 (got %d)", cfg.LongPrefillTokenThreshold)
	}
	bsOK := false
	for _, b := range validBlockSizes {
		bsOK = bsOK || b == cfg.BlockSize
	}
	if !bsOK {
		return nil, fmt.Errorf("invalid --block-size %d; use one of 1, 8, 16, 32, 64, 128", cfg.BlockSize)
	}
	if !(cfg.GPUMemoryUtilization > 0 && cfg.GPUMemoryUtilization <= 1) {
		return nil, fmt.Errorf("--gpu-memory-utilization must be in (0, 1] (got %v)", cfg.GPUMemoryUtilization)
	}
	tp := cfg.TensorParallelSize
	if tp < 1 {
		return nil, fmt.Errorf("--tensor-parallel-size must be >= 1 (got %d)", tp)
	}
	if m.QHeads%tp != 0 {
		return nil, fmt.Errorf("total number of attention heads (%d) must be divisible by tensor parallel size (%d)", m.QHeads, tp)
	}
	if cfg.Slowdown < 0 || math.IsNaN(cfg.Slowdown) || math.IsInf(cfg.Slowdown, 0) {
		return nil, fmt.Errorf("--sim-slowdown must be > 0 (got %v)", cfg.Slowdown)
	}
	if cfg.Jitter < 0 || cfg.Jitter > 1 || math.IsNaN(cfg.Jitter) {
		return nil, fmt.Errorf("--sim-jitter must be in [0, 1] (got %v)", cfg.Jitter)
	}
	if cfg.ColdStart < 0 {
		return nil, fmt.Errorf("--sim-cold-start must be >= 0 (got %v)", cfg.ColdStart)
	}
	if cfg.FixedTTFT < 0 || cfg.FixedITL < 0 {
		return nil, fmt.Errorf("--sim-fixed-ttft and --sim-fixed-itl must be >= 0 (got %v, %v)", cfg.FixedTTFT, cfg.FixedITL)
	}
	if (cfg.FixedTTFT > 0) != (cfg.FixedITL > 0) {
		return nil, fmt.Errorf("--sim-fixed-ttft (%v) and --sim-fixed-itl (%v) go together: set both for exact timing, or neither for the timing model", cfg.FixedTTFT, cfg.FixedITL)
	}
	if cfg.EOSProbability < 0 || cfg.EOSProbability > 1 || math.IsNaN(cfg.EOSProbability) {
		return nil, fmt.Errorf("--sim-eos-prob must be in [0, 1] (got %v)", cfg.EOSProbability)
	}
	switch cfg.MetricsVersion {
	case "", "0.9":
	default:
		return nil, fmt.Errorf("unknown --sim-metrics-version %q; use \"\" (current names) or \"0.9\" (vLLM 0.9 names)", cfg.MetricsVersion)
	}
	spec, err := ParseSpeculativeConfig(cfg.SpeculativeConfig)
	if err != nil {
		return nil, err
	}
	r.spec = spec
	if spec != nil && spec.Method == "draft_model" {
		d, ok := LookupModel(spec.Model)
		if !ok {
			d = modelPresets[DefaultModel]
		}
		r.draft = d
	}

	// Memory (per GPU).
	kvHeadsPerGPU := math.Max(1, math.Ceil(float64(m.KVHeads)/float64(tp)))
	r.kvBytesPerToken = 2 * float64(m.Layers) * kvHeadsPerGPU * float64(m.HeadDim) * r.kvElem
	r.weightBytes = m.Params * r.weightByte / float64(tp)
	if spec != nil && spec.Method == "draft_model" {
		r.weightBytes += r.draft.Params * r.weightByte
	}
	reserve := float64(activationReserveBase) + float64(cfg.MaxNumBatchedTokens)*float64(m.Hidden)*activationBytesPerTokenHidden
	r.memAvail = gpu.MemBytes*cfg.GPUMemoryUtilization - r.weightBytes - reserve
	blockBytes := float64(cfg.BlockSize) * r.kvBytesPerToken
	r.numGPUBlocks = int(math.Floor(r.memAvail / blockBytes))
	if r.numGPUBlocks <= 0 {
		return nil, fmt.Errorf("no available memory for the cache blocks: %.2f GiB × gpu_memory_utilization %.2f leaves %.2f GiB after %.2f GiB of weights and %.2f GiB of activations; try increasing --gpu-memory-utilization, a bigger --sim-gpu, or a larger --tensor-parallel-size",
			gpu.MemBytes/gib, cfg.GPUMemoryUtilization, r.memAvail/gib, r.weightBytes/gib, reserve/gib)
	}
	if r.numGPUBlocks*cfg.BlockSize < cfg.MaxModelLen {
		return nil, fmt.Errorf("the model's max seq len (%d) is larger than the maximum number of tokens that can be stored in KV cache (%d). Try increasing --gpu-memory-utilization or decreasing --max-model-len when initializing the engine",
			cfg.MaxModelLen, r.numGPUBlocks*cfg.BlockSize)
	}
	return r, nil
}

// stepOverheadTP is the per-step all-reduce cost with tensor parallelism.
func (r *resolved) allReduce(tokens int) time.Duration {
	tp := r.cfg.TensorParallelSize
	if tp <= 1 {
		return 0
	}
	// Two all-reduces per layer of tokens × hidden activations; ring all-reduce moves 2(tp-1)/tp of the data.
	bytes := 2 * float64(r.model.Layers) * float64(tokens) * float64(r.model.Hidden) * r.weightByte * 2 * float64(tp-1) / float64(tp)
	lat := time.Duration(2*r.model.Layers) * r.gpu.AllReduceLatency
	return lat + time.Duration(bytes/r.gpu.InterconnectBandwidth*float64(time.Second))
}
