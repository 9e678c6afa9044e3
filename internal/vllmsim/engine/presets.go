package engine

import (
	"sort"
	"strings"
	"time"
)

// GPUPreset describes one accelerator for the roofline timing model, plus the
// host-side overheads of a vLLM engine step on that class of machine.
type GPUPreset struct {
	Name string
	// PeakFLOPS is the dense bf16/fp16 tensor throughput in FLOP/s (no sparsity).
	PeakFLOPS float64
	// MemBandwidth is the HBM/GDDR bandwidth in bytes/s.
	MemBandwidth float64
	// MemBytes is the device memory in bytes as the CUDA runtime reports it
	// (total of torch.cuda.mem_get_info: a little under the marketing figure).
	MemBytes float64
	// PrefillEfficiency is the fraction of PeakFLOPS real prefill kernels reach.
	PrefillEfficiency float64
	// DecodeEfficiency is the fraction of MemBandwidth real decode kernels reach.
	DecodeEfficiency float64
	// StepOverhead is the fixed GPU-side cost of every step (kernel launches,
	// sampling, CUDA-graph replay) paid on top of max(compute, memory).
	StepOverhead time.Duration
	// CPUStepOverhead is the fixed host-side cost of a step (scheduling,
	// input preparation, output processing).
	CPUStepOverhead time.Duration
	// PerSeqOverhead is the host-side cost per sequence in the step
	// (detokenization, stop checks, output streaming). The host path overlaps the
	// GPU path (vLLM V1 async scheduling), so a step lasts
	// max(GPU path, host path); the host path dominating past a batch size is
	// what makes the throughput/latency knee.
	PerSeqOverhead time.Duration
	// AllReduceLatency is the per-layer cost of the tensor-parallel all-reduces
	// (two per layer), paid only when tensor_parallel_size > 1.
	AllReduceLatency time.Duration
	// InterconnectBandwidth is the per-GPU all-reduce bandwidth in bytes/s
	// (NVLink for SXM parts, PCIe otherwise).
	InterconnectBandwidth float64
	// Source names where the numbers come from.
	Source string
}

const (
	gib = 1 << 30
	gb  = 1e9
	tb  = 1e12
)

// gpuPresets are the accelerators the simulator knows. The datasheet numbers
// are dense bf16/fp16 tensor FLOP/s, bandwidth and memory; the efficiencies
// follow the usual "decode reaches 60–80 % of bandwidth, prefill 40–60 % of
// peak" rule (lower for consumer parts running a small model); the overheads
// follow vLLM's v0.6.0 performance post (GPU busy only 38 % of the time for
// Llama-3-8B on H100 before v0.6) and RFC #6854 (5–13 ms GPU bubble per decode
// step in V0; V1 cut this with async scheduling). The rtx4090 (default) host
// overheads are calibrated against the seed article's end-to-end numbers; see
// docs/simulator.md.
var gpuPresets = map[string]GPUPreset{
	"h100": {
		Name: "h100", PeakFLOPS: 989 * tb, MemBandwidth: 3.35 * tb, MemBytes: 79.1 * gib,
		PrefillEfficiency: 0.5, DecodeEfficiency: 0.75,
		StepOverhead: 3 * time.Millisecond, CPUStepOverhead: 1500 * time.Microsecond, PerSeqOverhead: 40 * time.Microsecond,
		AllReduceLatency: 10 * time.Microsecond, InterconnectBandwidth: 450 * gb,
		Source: "NVIDIA H100 SXM datasheet: 989 TFLOP/s bf16 dense, 3.35 TB/s HBM3, 80 GB; NVLink 900 GB/s bidirectional",
	},
	"h200": {
		Name: "h200", PeakFLOPS: 989 * tb, MemBandwidth: 4.8 * tb, MemBytes: 139.8 * gib,
		PrefillEfficiency: 0.5, DecodeEfficiency: 0.75,
		StepOverhead: 3 * time.Millisecond, CPUStepOverhead: 1500 * time.Microsecond, PerSeqOverhead: 40 * time.Microsecond,
		AllReduceLatency: 10 * time.Microsecond, InterconnectBandwidth: 450 * gb,
		Source: "NVIDIA H200 SXM datasheet: 989 TFLOP/s bf16 dense, 4.8 TB/s HBM3e, 141 GB; NVLink 900 GB/s bidirectional",
	},
	"a100": {
		Name: "a100", PeakFLOPS: 312 * tb, MemBandwidth: 2.0 * tb, MemBytes: 79.2 * gib,
		PrefillEfficiency: 0.55, DecodeEfficiency: 0.75,
		StepOverhead: 4 * time.Millisecond, CPUStepOverhead: 2 * time.Millisecond, PerSeqOverhead: 50 * time.Microsecond,
		AllReduceLatency: 15 * time.Microsecond, InterconnectBandwidth: 300 * gb,
		Source: "NVIDIA A100 SXM 80GB datasheet: 312 TFLOP/s bf16 dense, 2.0 TB/s HBM2e, 80 GB; NVLink 600 GB/s bidirectional",
	},
	"l40s": {
		Name: "l40s", PeakFLOPS: 362 * tb, MemBandwidth: 864 * gb, MemBytes: 44.4 * gib,
		PrefillEfficiency: 0.45, DecodeEfficiency: 0.7,
		StepOverhead: 5 * time.Millisecond, CPUStepOverhead: 2 * time.Millisecond, PerSeqOverhead: 60 * time.Microsecond,
		AllReduceLatency: 40 * time.Microsecond, InterconnectBandwidth: 32 * gb,
		Source: "NVIDIA L40S datasheet: 362 TFLOP/s fp16 dense, 864 GB/s GDDR6, 48 GB; PCIe Gen4 x16",
	},
	"a10": {
		Name: "a10", PeakFLOPS: 125 * tb, MemBandwidth: 600 * gb, MemBytes: 22.1 * gib,
		PrefillEfficiency: 0.45, DecodeEfficiency: 0.7,
		StepOverhead: 6 * time.Millisecond, CPUStepOverhead: 2 * time.Millisecond, PerSeqOverhead: 80 * time.Microsecond,
		AllReduceLatency: 40 * time.Microsecond, InterconnectBandwidth: 32 * gb,
		Source: "NVIDIA A10 datasheet: 125 TFLOP/s fp16 dense, 600 GB/s GDDR6, 24 GB; PCIe Gen4 x16",
	},
	"l4": {
		Name: "l4", PeakFLOPS: 121 * tb, MemBandwidth: 300 * gb, MemBytes: 22.0 * gib,
		PrefillEfficiency: 0.45, DecodeEfficiency: 0.7,
		StepOverhead: 6 * time.Millisecond, CPUStepOverhead: 2 * time.Millisecond, PerSeqOverhead: 80 * time.Microsecond,
		AllReduceLatency: 40 * time.Microsecond, InterconnectBandwidth: 32 * gb,
		Source: "NVIDIA L4 datasheet: 121 TFLOP/s fp16 dense, 300 GB/s GDDR6, 24 GB; PCIe Gen4 x16",
	},
	"rtx4090": {
		Name: "rtx4090", PeakFLOPS: 165 * tb, MemBandwidth: 1008 * gb, MemBytes: 23.6 * gib,
		// A 0.6 B model's small GEMMs (hidden 1024) reach far less of the peak than big models.
		PrefillEfficiency: 0.3, DecodeEfficiency: 0.7,
		// Seed calibration (consumer box, Python client, fp16 Qwen3-0.6B): warm
		// steps ≈ 20 ms up to ~8 sequences, ≈ 44 ms at 20 sequences (450 tok/s).
		StepOverhead: 18 * time.Millisecond, CPUStepOverhead: 4 * time.Millisecond, PerSeqOverhead: 2 * time.Millisecond,
		AllReduceLatency: 60 * time.Microsecond, InterconnectBandwidth: 25 * gb,
		Source: "NVIDIA Ada (AD102) whitepaper: RTX 4090 165 TFLOP/s fp16 tensor with fp32 accumulate (dense), 1008 GB/s GDDR6X, 24 GB; PCIe Gen4, no NVLink",
	},
}

// DefaultGPU is the GPU preset used when Config.GPU is empty: the
// consumer-class card of the seed article.
const DefaultGPU = "rtx4090"

// ModelPreset describes a model's shape for KV sizing and the timing model.
type ModelPreset struct {
	Name string
	// Params is the total parameter count (weights in memory).
	Params float64
	// NonEmbeddingParams is the parameter count used per token in the layers
	// (attention + MLP), excluding the embedding table and LM head.
	NonEmbeddingParams float64
	Layers             int
	Hidden             int
	QHeads             int
	KVHeads            int
	HeadDim            int
	Vocab              int
	TiedEmbeddings     bool
	MaxModelLen        int   // max_position_embeddings (vLLM's default max_model_len)
	EOSTokenID         int32 // id emitted as the last token when a request stops on EOS
	Source             string
}

// DefaultModel is the model used when Config.Model is empty, and the shape
// used for any model name without a preset.
const DefaultModel = "Qwen/Qwen3-0.6B"

var modelPresets = map[string]ModelPreset{
	"Qwen/Qwen3-0.6B": {
		Name: "Qwen/Qwen3-0.6B", Params: 0.6e9, NonEmbeddingParams: 0.44e9,
		Layers: 28, Hidden: 1024, QHeads: 16, KVHeads: 8, HeadDim: 128, Vocab: 151936, TiedEmbeddings: true,
		MaxModelLen: 40960, EOSTokenID: 151645,
		Source: "huggingface.co/Qwen/Qwen3-0.6B config.json and model card (0.6B, 0.44B non-embedding)",
	},
	"Qwen/Qwen3-8B": {
		Name: "Qwen/Qwen3-8B", Params: 8.2e9, NonEmbeddingParams: 6.95e9,
		Layers: 36, Hidden: 4096, QHeads: 32, KVHeads: 8, HeadDim: 128, Vocab: 151936,
		MaxModelLen: 40960, EOSTokenID: 151645,
		Source: "huggingface.co/Qwen/Qwen3-8B config.json and model card (8.2B, 6.95B non-embedding)",
	},
	"meta-llama/Llama-3.1-8B-Instruct": {
		Name: "meta-llama/Llama-3.1-8B-Instruct", Params: 8.03e9, NonEmbeddingParams: 6.98e9,
		Layers: 32, Hidden: 4096, QHeads: 32, KVHeads: 8, HeadDim: 128, Vocab: 128256,
		MaxModelLen: 131072, EOSTokenID: 128009,
		Source: "huggingface.co/meta-llama/Llama-3.1-8B-Instruct config.json",
	},
	"meta-llama/Llama-3.1-70B-Instruct": {
		Name: "meta-llama/Llama-3.1-70B-Instruct", Params: 70.6e9, NonEmbeddingParams: 68.5e9,
		Layers: 80, Hidden: 8192, QHeads: 64, KVHeads: 8, HeadDim: 128, Vocab: 128256,
		MaxModelLen: 131072, EOSTokenID: 128009,
		Source: "huggingface.co/meta-llama/Llama-3.1-70B-Instruct config.json",
	},
}

// GPUPresetNames lists the GPU presets, sorted.
func GPUPresetNames() []string { return sortedKeys(gpuPresets) }

// ModelPresetNames lists the model presets, sorted.
func ModelPresetNames() []string { return sortedKeys(modelPresets) }

// LookupGPU returns the named GPU preset (case-insensitive).
func LookupGPU(name string) (GPUPreset, bool) {
	p, ok := gpuPresets[strings.ToLower(strings.TrimSpace(name))]
	return p, ok
}

// LookupModel returns the preset for an HF model id, matching case-insensitively
// and also on the last path element (so a local path like
// /models/qwen/Qwen3-0.6B finds Qwen/Qwen3-0.6B).
func LookupModel(name string) (ModelPreset, bool) {
	if p, ok := modelPresets[name]; ok {
		return p, true
	}
	base := strings.ToLower(name[strings.LastIndex(name, "/")+1:])
	for k, p := range modelPresets {
		if strings.EqualFold(k, name) || strings.ToLower(k[strings.LastIndex(k, "/")+1:]) == base {
			return p, true
		}
	}
	return ModelPreset{}, false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
