package engine

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/metrics"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/spec"
)

// The activation memory vLLM's profiling run reserves next to the weights.
// gib is a GiB in bytes.
const gib = 1 << 30

const (
	// activationReserveBase is the memory vLLM's profiling run leaves for the
	// CUDA context, CUDA graphs and the non-torch allocations (about 1 GiB).
	activationReserveBase = 1 * gib
	// activationBytesPerTokenHidden × max_num_batched_tokens × hidden is the
	// peak activation memory of the profiling forward pass.
	activationBytesPerTokenHidden = 24
)

// resolved is a validated configuration with everything derived from it.
type resolved struct {
	cfg        Config // derived sizes filled in
	gpu        presets.GPUPreset
	model      presets.ModelPreset
	modelNote  string
	spec       *spec.Config
	draft      presets.ModelPreset // draft model shape (draft_model method)
	weightByte float64             // bytes per weight element
	kvElem     float64             // bytes per KV element
	prefillEff float64             // the GPU's prefill efficiency on this model
	cacheDtype string              // cache_config_info's cache_dtype
	// per GPU
	weightBytes     float64
	kvBytesPerToken float64 // per GPU (KV heads split by TP)
	numGPUBlocks    int
	memAvail        float64 // bytes left for the KV cache: vLLM's "Available KV cache memory"
}

// resolve validates cfg (Config.Validate) and derives the presets, the
// dtypes' sizes and the KV cache from it.
func resolve(cfg Config) (*resolved, error) {
	if err := cfg.checkFields(); err != nil {
		return nil, err
	}
	cfg = derive(cfg)
	r := &resolved{cfg: cfg}
	r.gpu, _ = presets.LookupGPU(cfg.GPU) // checkFields found it
	r.cfg.GPU = r.gpu.Name
	if cfg.GPUSpec != nil {
		r.gpu = *cfg.GPUSpec
		r.gpu.Name = r.cfg.GPU
	}
	m, ok := presets.LookupModel(cfg.Model)
	if !ok {
		m = presets.DefaultModelPreset()
		r.modelNote = fmt.Sprintf("model %q has no preset: simulating it with the shape of %s (presets: %s)", cfg.Model, presets.DefaultModel, strings.Join(presets.ModelPresetNames(), ", "))
	}
	r.model = m
	if m.Pooling && r.cfg.PoolingModel() {
		// vLLM runs an encoder (bidirectional attention) without the
		// prefix cache and chunked prefill.
		r.cfg.EnablePrefixCaching, r.cfg.EnableChunkedPrefill = false, false
	}
	r.spec, _ = spec.Parse(cfg.SpeculativeConfig) // checkFields parsed it
	if r.spec != nil && r.spec.Method == "draft_model" {
		d, ok := presets.LookupModel(r.spec.Model)
		if !ok {
			d = presets.DefaultModelPreset()
		}
		r.draft = d
	}
	r.prefillEff = prefillEfficiency(r.gpu, m.Hidden)
	r.sizeDtypes()
	if err := r.checkScheduler(); err != nil {
		return nil, err
	}
	if err := r.sizeKVCache(); err != nil {
		return nil, err
	}
	return r, nil
}

// sizeDtypes sets the bytes per weight and per KV element.
func (r *resolved) sizeDtypes() {
	r.weightByte = 2 // auto (the presets are 16-bit models), half, float16, bfloat16
	if r.cfg.Dtype == "float" || r.cfg.Dtype == "float32" {
		r.weightByte = 4
	}
	r.kvElem, r.cacheDtype = 1, r.cfg.KVCacheDtype // the fp8 variants
	switch r.cfg.KVCacheDtype {
	case "auto":
		r.kvElem = r.weightByte
	case "bfloat16":
		r.kvElem = 2
	}
}

// checkScheduler applies vLLM's rules that pair the scheduler's sizes with
// each other and with the model, in vLLM's words.
func (r *resolved) checkScheduler() error {
	cfg, m := r.cfg, r.model
	if cfg.MaxNumBatchedTokens < cfg.MaxNumSeqs {
		return fmt.Errorf("max_num_batched_tokens (%d) must be greater than or equal to max_num_seqs (%d); raise --max-num-batched-tokens or lower --max-num-seqs", cfg.MaxNumBatchedTokens, cfg.MaxNumSeqs)
	}
	if r.modelNote == "" && cfg.MaxModelLen > m.MaxModelLen {
		return fmt.Errorf("user-specified max_model_len (%d) is greater than the derived max_model_len (max_position_embeddings=%d in model's config.json); lower --max-model-len", cfg.MaxModelLen, m.MaxModelLen)
	}
	if !cfg.EnableChunkedPrefill && cfg.MaxNumBatchedTokens < cfg.MaxModelLen {
		return fmt.Errorf("max_num_batched_tokens (%d) is smaller than max_model_len (%d). This effectively limits the maximum sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase max_num_batched_tokens or decrease max_model_len (or enable chunked prefill)", cfg.MaxNumBatchedTokens, cfg.MaxModelLen)
	}
	if m.QHeads%cfg.TensorParallelSize != 0 {
		return fmt.Errorf("total number of attention heads (%d) must be divisible by tensor parallel size (%d)", m.QHeads, cfg.TensorParallelSize)
	}
	return nil
}

// sizeKVCache computes the memory per GPU and the number of KV blocks, as
// vLLM's profiling run does, and refuses a cache that cannot hold one
// max_model_len sequence.
func (r *resolved) sizeKVCache() error {
	cfg, m, gpu := r.cfg, r.model, r.gpu
	tp := cfg.TensorParallelSize
	kvHeadsPerGPU := math.Max(1, math.Ceil(float64(m.KVHeads)/float64(tp)))
	r.kvBytesPerToken = 2 * float64(m.Layers) * kvHeadsPerGPU * float64(m.HeadDim) * r.kvElem
	r.weightBytes = m.Params * r.weightByte / float64(tp)
	if r.spec != nil && r.spec.Method == "draft_model" {
		r.weightBytes += r.draft.Params * r.weightByte
	}
	reserve := float64(activationReserveBase) + float64(cfg.MaxNumBatchedTokens)*float64(m.Hidden)*activationBytesPerTokenHidden
	r.memAvail = gpu.MemBytes*cfg.GPUMemoryUtilization - r.weightBytes - reserve
	blockBytes := float64(cfg.BlockSize) * r.kvBytesPerToken
	r.numGPUBlocks = int(math.Floor(r.memAvail / blockBytes))
	if r.numGPUBlocks <= 0 {
		return fmt.Errorf("no available memory for the cache blocks: %.2f GiB × gpu_memory_utilization %.2f leaves %.2f GiB after %.2f GiB of weights and %.2f GiB of activations; try increasing --gpu-memory-utilization, a bigger --sim-gpu, or a larger --tensor-parallel-size",
			gpu.MemBytes/gib, cfg.GPUMemoryUtilization, r.memAvail/gib, r.weightBytes/gib, reserve/gib)
	}
	if r.numGPUBlocks*cfg.BlockSize < cfg.MaxModelLen {
		return fmt.Errorf("the model's max seq len (%d) is larger than the maximum number of tokens that can be stored in KV cache (%d). Try increasing --gpu-memory-utilization or decreasing --max-model-len when initializing the engine",
			cfg.MaxModelLen, r.numGPUBlocks*cfg.BlockSize)
	}
	return nil
}

// metricsSetup is what the engine's metrics need from r.
func (r *resolved) metricsSetup() metrics.Setup {
	st := metrics.Setup{
		Family:    r.cfg.Family,
		ModelName: r.cfg.ModelName(),
		V09:       r.cfg.MetricsVersion == MetricsV09,
		Cache: metrics.Cache{
			BlockSize:            r.cfg.BlockSize,
			Dtype:                r.cacheDtype,
			PrefixCaching:        r.cfg.EnablePrefixCaching,
			GPUMemoryUtilization: r.cfg.GPUMemoryUtilization,
			NumGPUBlocks:         r.numGPUBlocks,
			SwapSpace:            swapSpaceLabel(r.cfg.SwapSpace),
		},
		MaxModelLen: r.cfg.MaxModelLen,
	}
	if r.spec != nil {
		st.SpecTokens = r.spec.NumSpeculativeTokens
	}
	if r.cfg.EnableLoRA {
		st.MaxLoRAs = strconv.Itoa(r.cfg.maxLoRAs())
	}
	return st
}

// swapSpaceLabel is cache_config_info's swap_space as vLLM prints it: its
// default is the int 4 ("4"), a value given on the command line is a float
// ("8.0").
func swapSpaceLabel(gib float64) string {
	if gib == DefaultSwapSpace {
		return strconv.Itoa(DefaultSwapSpace)
	}
	return metrics.PyFloat(gib)
}
