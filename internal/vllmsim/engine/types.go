// Package engine is the simulated vLLM V1 engine: a continuous-batching
// scheduler with a per-step token budget, KV-cache blocks with prefix caching
// and preemption, a roofline timing model with GPU and model presets,
// speculative decoding, and vLLM's Prometheus metrics.
//
// The engine works on token ids; text and HTTP live in package vllmsim.
package engine

import "time"

// Config is the engine's configuration, one field per vLLM serve flag
// (or --sim-* flag) that affects it. Zero values mean vLLM's default
// unless a field says otherwise; Defaults fills them in.
type Config struct {
	Model                string   // --model (a preset name or any HF id)
	ServedModelNames     []string // --served-model-name; the first is the model_name label
	MaxNumSeqs           int      // --max-num-seqs
	MaxNumBatchedTokens  int      // --max-num-batched-tokens
	MaxModelLen          int      // --max-model-len
	BlockSize            int      // --block-size (16)
	GPUMemoryUtilization float64  // --gpu-memory-utilization (0.9)
	Dtype                string   // --dtype (auto|float16|bfloat16|half|float32)
	KVCacheDtype         string   // --kv-cache-dtype (auto|fp8|fp8_e4m3|fp8_e5m2)
	EnablePrefixCaching  bool     // --enable-prefix-caching / --no-enable-prefix-caching (default on)
	EnableChunkedPrefill bool     // --enable-chunked-prefill / --no-enable-chunked-prefill (default on)
	TensorParallelSize   int      // --tensor-parallel-size (1)
	SpeculativeConfig    string   // --speculative-config JSON ("" = off)

	GPU            string        // --sim-gpu preset
	Seed           int64         // --sim-seed
	Jitter         float64       // --sim-jitter: relative std-dev of step time noise
	Slowdown       float64       // --sim-slowdown: multiplies every step time (1 = none)
	ColdStart      time.Duration // --sim-cold-start: extra cost paid by the first requests (0 = none)
	FixedTTFT      time.Duration // --sim-fixed-ttft: exact per-request TTFT (with FixedITL: bypasses the timing model)
	FixedITL       time.Duration // --sim-fixed-itl: exact gap between output tokens
	MetricsVersion string        // --sim-metrics-version: "" (current names) or "0.9" (old names)
}

// Request is one generation request, already tokenized.
type Request struct {
	ID           string
	PromptTokens []int32
	MaxTokens    int
	MinTokens    int
	IgnoreEOS    bool
	// Arrival is when the API server received the request (queue time starts here).
	Arrival time.Time
}

// Output is one engine step's result for one request, sent on the channel
// Submit returns. The channel is closed after the output with Finished set.
type Output struct {
	// Tokens are the new tokens of this step: one, or several with speculative decoding.
	Tokens []int32
	// Finished is set on the request's last output.
	Finished bool
	// FinishReason is "stop", "length" or "abort" on the last output.
	FinishReason string
	// CachedPromptTokens is how many prompt tokens came from the prefix cache
	// (set on the first output).
	CachedPromptTokens int
	// Err ends the request with an error (engine dead, aborted by shutdown).
	Err error
}
