package calibration

import "slices"

// GPUPresets are the simulator's GPU preset names a row may name in
// hardware.gpu. Keep in sync with the GPU presets of the simulator's engine
// (internal/vllmsim/engine, gpuPresets); TestPresetNamesInSync checks it by
// reading the engine's source, since this package must not import the engine.
var GPUPresets = []string{"a10", "a100", "h100", "h200", "l4", "l40s", "rtx4090", "rtx4090-seed"}

// ModelPresets are the simulator's model preset names a row may name in
// model.preset. Keep in sync with the engine's modelPresets (see GPUPresets).
var ModelPresets = []string{
	"BAAI/bge-small-en-v1.5",
	"Qwen/Qwen2.5-0.5B-Instruct",
	"Qwen/Qwen2.5-VL-3B-Instruct",
	"Qwen/Qwen3-0.6B",
	"Qwen/Qwen3-14B",
	"Qwen/Qwen3-8B",
	"meta-llama/Llama-3.1-70B-Instruct",
	"meta-llama/Llama-3.1-8B-Instruct",
}

// modelledFlags are the vLLM serve flags vllm-sim models, i.e. the ones
// SimInputs passes on to the simulator. Every other published flag is
// returned in SimInputs.Unmodelled instead of being passed, because vllm-sim
// either rejects it or accepts it without any effect on timing. Keep in sync
// with the flag table of internal/vllmsim (flags.go) and docs/simulator.md.
var modelledFlags = []string{
	"block-size",
	"dtype",
	"enable-chunked-prefill",
	"enable-prefix-caching",
	"gpu-memory-utilization",
	"kv-cache-dtype",
	"long-prefill-token-threshold",
	"max-model-len",
	"max-num-batched-tokens",
	"max-num-seqs",
	"no-enable-chunked-prefill",
	"no-enable-prefix-caching",
	"speculative-config",
	"tensor-parallel-size",
	"tokenizer-mode",
}

func isGPUPreset(name string) bool   { return slices.Contains(GPUPresets, name) }
func isModelPreset(name string) bool { return slices.Contains(ModelPresets, name) }
func isModelledFlag(name string) bool {
	return slices.Contains(modelledFlags, name)
}
