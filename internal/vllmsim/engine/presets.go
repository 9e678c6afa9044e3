package engine

import (
	"sort"
	"strings"
	"time"
)

// GPUPreset describes one machine for the timing model: an accelerator's
// datasheet figures (FLOP/s, bandwidth, memory), what vLLM's kernels reach of
// them, the engine core's per-step costs, and the API server's costs in front
// of the engine. The figures after the datasheet ones are fitted to published
// vLLM serving measurements (docs/calibration.md).
type GPUPreset struct {
	Name string
	// PeakFLOPS is the dense bf16/fp16 tensor throughput in FLOP/s (no sparsity).
	PeakFLOPS float64
	// MemBandwidth is the HBM/GDDR bandwidth in bytes/s.
	MemBandwidth float64
	// MemBytes is the device memory in bytes as the CUDA runtime reports it
	// (total of torch.cuda.mem_get_info: a little under the marketing figure).
	MemBytes float64
	// PrefillEfficiency is the fraction of PeakFLOPS prefill kernels reach on
	// a model of hidden size PrefillRefHidden (4096) or more.
	PrefillEfficiency float64
	// PrefillSmallModelExponent makes prefill slower on small models: below
	// PrefillRefHidden the efficiency is PrefillEfficiency ×
	// (hidden / PrefillRefHidden)^PrefillSmallModelExponent (a 1024-wide GEMM
	// fills far less of the GPU than a 4096-wide one).
	PrefillSmallModelExponent float64
	// DecodeEfficiency is the fraction of MemBandwidth the memory-bound part
	// of a step reaches (weights and KV cache read once per step).
	DecodeEfficiency float64
	// StepOverhead is the fixed GPU-side cost of every step (kernel launches,
	// sampling, CUDA-graph replay, the gaps between kernels), paid on top of
	// max(compute, memory). Fitted together with DecodeEfficiency, so that one
	// loss is not counted twice.
	StepOverhead time.Duration
	// SeqOverhead is the cost per sequence in the step on its critical path:
	// input preparation, sampling and the engine core's bookkeeping, which
	// vLLM V1 without async scheduling does between the GPU's kernels. It is
	// what makes TPOT grow with the batch beyond the KV cache's reads.
	SeqOverhead time.Duration
	// CPUStepOverhead is the fixed host-side cost of a step (scheduling,
	// input preparation, output processing in the engine core).
	CPUStepOverhead time.Duration
	// PerSeqOverhead is the host-side cost per sequence in the step (input
	// preparation, stop checks, output serialisation in the engine core). The
	// host path overlaps the GPU path (vLLM V1's async scheduling and
	// overlapped output processing), so a step lasts max(GPU path, host path);
	// the host path dominating past a batch size is a throughput/latency knee.
	PerSeqOverhead time.Duration
	// AllReduceLatency is the per-layer cost of the tensor-parallel all-reduces
	// (two per layer), paid only when tensor_parallel_size > 1.
	AllReduceLatency time.Duration
	// InterconnectBandwidth is the per-GPU all-reduce bandwidth in bytes/s
	// (NVLink for SXM parts, PCIe otherwise).
	InterconnectBandwidth float64
	// Frontend is the API server in front of the engine.
	Frontend FrontendPreset
	// Source names where the numbers come from.
	Source string
}

// FrontendPreset is the cost of vLLM's API server process, in front of the
// engine core: HTTP handling, the chat template and tokenization on the way
// in, detokenization and streaming on the way out, the hop to the engine core.
// A request's input work is Base + PerPromptToken × prompt tokens; every token
// the engine emits costs PerOutputToken of the same workers' time. Workers
// serve that work first come, first served, so a burst of requests queues in
// the front end before the engine sees them: TTFT (measured from the HTTP
// arrival, as vLLM's server-side histogram is) includes it, the engine's
// num_requests_waiting does not. Latency is added without queueing.
type FrontendPreset struct {
	// Latency is the part of a request's way through the API server that
	// occupies no worker (network and HTTP round trips, the hop to the engine
	// core and back, awaiting): it adds to every TTFT but does not queue.
	Latency time.Duration
	// Base is the per-request input work that does not depend on length.
	Base time.Duration
	// PerPromptToken is the input cost per prompt token (tokenization).
	PerPromptToken time.Duration
	// PerOutputToken is the cost per generated token (detokenization, SSE),
	// taken from the workers' time when the token is emitted.
	PerOutputToken time.Duration
	// Workers is how many requests the front end works on at once (vLLM's
	// API server is one process: 1).
	Workers int
	// SlowDetokenizeFactor multiplies PerOutputToken with --tokenizer-mode
	// slow or mistral: vLLM's slow incremental detokenizer, used for
	// tokenizers that are not Hugging Face fast tokenizers, re-decodes a
	// window of tokens in Python for every token.
	SlowDetokenizeFactor float64
}

// PrefillRefHidden is the hidden size at and above which prefill reaches a
// preset's full PrefillEfficiency.
const PrefillRefHidden = 4096

const (
	gib = 1 << 30
	gb  = 1e9
	tb  = 1e12
)

// gpuPresets are the machines the simulator knows. The datasheet numbers
// are dense bf16/fp16 tensor FLOP/s, bandwidth and memory; the efficiencies,
// step costs and front-end costs of h100, h200, l4 and rtx4090 are fitted to
// the fit set of the calibration data (internal/vllmsim/calibration,
// docs/calibration.md); a100, l40s and a10 have no replayable published row
// and carry values interpolated from the fitted presets (named as such in
// their Source). rtx4090-seed, the default, is the seed article's whole setup
// (docs/simulator.md).
var gpuPresets = map[string]GPUPreset{
	"h100": {
		Name: "h100", PeakFLOPS: 989 * tb, MemBandwidth: 3.35 * tb, MemBytes: 79.1 * gib,
		// Fitted: StepOverhead, SeqOverhead, Frontend (3 H100 rows, Qwen3-8B,
		// vLLM 0.11, chat). Priors: DecodeEfficiency 0.9, PrefillEfficiency
		// 0.5 (233-token prompts leave it unidentifiable), the exponent from l4.
		PrefillEfficiency: 0.5, PrefillSmallModelExponent: 0.77, DecodeEfficiency: 0.9,
		StepOverhead: 1585 * time.Microsecond, SeqOverhead: 73 * time.Microsecond,
		AllReduceLatency: 10 * time.Microsecond, InterconnectBandwidth: 450 * gb,
		Frontend: FrontendPreset{Latency: 50 * time.Millisecond, Base: 4400 * time.Microsecond, PerPromptToken: 130 * time.Nanosecond, PerOutputToken: 600 * time.Microsecond, Workers: 1, SlowDetokenizeFactor: 5},
		Source:   "NVIDIA H100 SXM datasheet: 989 TFLOP/s bf16 dense, 3.35 TB/s HBM3, 80 GB; NVLink 900 GB/s bidirectional",
	},
	"h200": {
		Name: "h200", PeakFLOPS: 989 * tb, MemBandwidth: 4.8 * tb, MemBytes: 139.8 * gib,
		// Fitted: StepOverhead (1 offline row: no front end in it). The rest
		// as h100; the front end is the median of the fitted presets'.
		PrefillEfficiency: 0.5, PrefillSmallModelExponent: 0.77, DecodeEfficiency: 0.9,
		StepOverhead: 2220 * time.Microsecond, SeqOverhead: 73 * time.Microsecond,
		AllReduceLatency: 10 * time.Microsecond, InterconnectBandwidth: 450 * gb,
		Frontend: typicalFrontend,
		Source:   "NVIDIA H200 SXM datasheet: 989 TFLOP/s bf16 dense, 4.8 TB/s HBM3e, 141 GB; NVLink 900 GB/s bidirectional",
	},
	"a100": {
		Name: "a100", PeakFLOPS: 312 * tb, MemBandwidth: 2.0 * tb, MemBytes: 79.2 * gib,
		// No replayable row: priors, and the medians of the fitted presets.
		PrefillEfficiency: 0.55, PrefillSmallModelExponent: 0.77, DecodeEfficiency: 0.9,
		StepOverhead: typicalStepOverhead, SeqOverhead: typicalSeqOverhead,
		AllReduceLatency: 15 * time.Microsecond, InterconnectBandwidth: 300 * gb,
		Frontend: typicalFrontend,
		Source:   "NVIDIA A100 SXM 80GB datasheet: 312 TFLOP/s bf16 dense, 2.0 TB/s HBM2e, 80 GB; NVLink 600 GB/s bidirectional",
	},
	"l40s": {
		Name: "l40s", PeakFLOPS: 362 * tb, MemBandwidth: 864 * gb, MemBytes: 44.4 * gib,
		// No replayable row: Ada like rtx4090 and l4, so their fitted prefill
		// efficiency; the medians of the fitted presets for the rest.
		PrefillEfficiency: 0.77, PrefillSmallModelExponent: 0.77, DecodeEfficiency: 0.9,
		StepOverhead: typicalStepOverhead, SeqOverhead: typicalSeqOverhead,
		AllReduceLatency: 40 * time.Microsecond, InterconnectBandwidth: 32 * gb,
		Frontend: typicalFrontend,
		Source:   "NVIDIA L40S datasheet: 362 TFLOP/s fp16 dense, 864 GB/s GDDR6, 48 GB; PCIe Gen4 x16",
	},
	"a10": {
		Name: "a10", PeakFLOPS: 125 * tb, MemBandwidth: 600 * gb, MemBytes: 22.1 * gib,
		// No replayable row: priors, and the medians of the fitted presets.
		PrefillEfficiency: 0.5, PrefillSmallModelExponent: 0.77, DecodeEfficiency: 0.9,
		StepOverhead: typicalStepOverhead, SeqOverhead: typicalSeqOverhead,
		AllReduceLatency: 40 * time.Microsecond, InterconnectBandwidth: 32 * gb,
		Frontend: typicalFrontend,
		Source:   "NVIDIA A10 datasheet: 125 TFLOP/s fp16 dense, 600 GB/s GDDR6, 24 GB; PCIe Gen4 x16",
	},
	"l4": {
		Name: "l4", PeakFLOPS: 121 * tb, MemBandwidth: 300 * gb, MemBytes: 22.0 * gib,
		// Fitted: PrefillSmallModelExponent, StepOverhead, SeqOverhead,
		// Frontend (3 L4 rows, Qwen2.5-0.5B, vLLM 0.23). Priors:
		// DecodeEfficiency 0.9; PrefillEfficiency from rtx4090 (both Ada).
		PrefillEfficiency: 0.77, PrefillSmallModelExponent: 0.77, DecodeEfficiency: 0.9,
		StepOverhead: 1750 * time.Microsecond, SeqOverhead: 18 * time.Microsecond,
		AllReduceLatency: 40 * time.Microsecond, InterconnectBandwidth: 32 * gb,
		Frontend: FrontendPreset{Base: 15500 * time.Microsecond, PerPromptToken: 28 * time.Microsecond, PerOutputToken: 75 * time.Microsecond, Workers: 1, SlowDetokenizeFactor: 5},
		Source:   "NVIDIA L4 datasheet: 121 TFLOP/s fp16 dense, 300 GB/s GDDR6, 24 GB; PCIe Gen4 x16",
	},
	"rtx4090": {
		Name: "rtx4090", PeakFLOPS: 165 * tb, MemBandwidth: 1008 * gb, MemBytes: 23.6 * gib,
		// Fitted: PrefillEfficiency, StepOverhead, SeqOverhead (→ 0),
		// Frontend (9 RTX 4090 rows: Qwen3-8B vLLM 0.10 chat, Llama-3-8B
		// vLLM 0.8.5, Mistral-7B with --tokenizer-mode mistral). Prior:
		// DecodeEfficiency 0.9; the exponent from l4 (both Ada).
		PrefillEfficiency: 0.77, PrefillSmallModelExponent: 0.77, DecodeEfficiency: 0.9,
		StepOverhead:     1670 * time.Microsecond,
		AllReduceLatency: 60 * time.Microsecond, InterconnectBandwidth: 25 * gb,
		Frontend: FrontendPreset{Base: 13600 * time.Microsecond, PerPromptToken: 11800 * time.Nanosecond, PerOutputToken: 139 * time.Microsecond, Workers: 1, SlowDetokenizeFactor: 5},
		Source:   "NVIDIA Ada (AD102) whitepaper: RTX 4090 165 TFLOP/s fp16 tensor with fp32 accumulate (dense), 1008 GB/s GDDR6X, 24 GB; PCIe Gen4, no NVLink",
	},
	"rtx4090-seed": {
		Name: "rtx4090-seed", PeakFLOPS: 165 * tb, MemBandwidth: 1008 * gb, MemBytes: 23.6 * gib,
		// The seed's setup (consumer box, Python client, fp16 Qwen3-0.6B): warm
		// steps ≈ 20 ms up to ~8 sequences, ≈ 44 ms at 20 sequences (450 tok/s).
		PrefillEfficiency: 0.3, PrefillSmallModelExponent: 0, DecodeEfficiency: 0.7,
		StepOverhead: 18 * time.Millisecond, CPUStepOverhead: 4 * time.Millisecond, PerSeqOverhead: 2 * time.Millisecond,
		AllReduceLatency: 60 * time.Microsecond, InterconnectBandwidth: 25 * gb,
		Frontend: FrontendPreset{Workers: 1},
		Source:   "the rtx4090 datasheet figures; efficiencies and overheads fitted to the seed article's end-to-end figures (the whole setup: server, Python client), see docs/simulator.md",
	},
}

// The values of presets without replayable published rows: the medians,
// figure by figure, of the fitted presets' (step overhead: h100, h200, l4,
// rtx4090; the rest: h100, l4, rtx4090).
var (
	typicalStepOverhead = 1710 * time.Microsecond
	typicalSeqOverhead  = 18 * time.Microsecond
	typicalFrontend     = FrontendPreset{Base: 13600 * time.Microsecond, PerPromptToken: 11800 * time.Nanosecond, PerOutputToken: 139 * time.Microsecond, Workers: 1, SlowDetokenizeFactor: 5}
)

// DefaultGPU is the GPU preset used when Config.GPU is empty: the seed
// article's consumer-class setup.
const DefaultGPU = "rtx4090-seed"

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
	"Qwen/Qwen2.5-0.5B-Instruct": {
		Name: "Qwen/Qwen2.5-0.5B-Instruct", Params: 0.49e9, NonEmbeddingParams: 0.36e9,
		Layers: 24, Hidden: 896, QHeads: 14, KVHeads: 2, HeadDim: 64, Vocab: 151936, TiedEmbeddings: true,
		MaxModelLen: 32768, EOSTokenID: 151645,
		Source: "huggingface.co/Qwen/Qwen2.5-0.5B-Instruct config.json and model card (0.49B, 0.36B non-embedding)",
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
