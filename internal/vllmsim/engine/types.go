// Package engine is the simulated vLLM V1 engine: a continuous-batching
// scheduler with a per-step token budget, KV-cache blocks with prefix caching
// and preemption, a roofline timing model with GPU and model presets,
// speculative decoding, and vLLM's Prometheus metrics.
//
// The engine works on token ids; text and HTTP live in package vllmsim.
package engine

import (
	"errors"
	"fmt"
	"time"
)

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
	// LongPrefillTokenThreshold caps the tokens one prefill may take per step
	// with chunked prefill (--long-prefill-token-threshold; 0 = no cap, vLLM's
	// default), leaving budget for other requests' prefills.
	LongPrefillTokenThreshold int

	GPU            string        // --sim-gpu preset
	Seed           int64         // --sim-seed
	Jitter         float64       // --sim-jitter: relative std-dev of step time noise
	Slowdown       float64       // --sim-slowdown: multiplies every step time (1 = none)
	ColdStart      time.Duration // --sim-cold-start: extra cost paid by the first requests (0 = none)
	FixedTTFT      time.Duration // --sim-fixed-ttft: exact per-request TTFT (with FixedITL: bypasses the timing model)
	FixedITL       time.Duration // --sim-fixed-itl: exact gap between output tokens
	MetricsVersion string        // --sim-metrics-version: "" (current names) or "0.9" (old names)
	// EOSProbability is the chance that each generated token (after MinTokens,
	// unless IgnoreEOS) is EOS and ends the request with "stop" (--sim-eos-prob; 0 = never).
	EOSProbability float64

	// Clock replaces the wall clock (tests); nil = real time.
	Clock Clock
}

// Clock is the engine's source of time. The engine waits on AfterFunc
// deadlines, so a fake clock can run a simulation faster than real time.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f (in its own goroutine) once the clock reaches t;
	// stop cancels it and reports whether it did.
	AfterFunc(t time.Time, f func()) (stop func() bool)
}

// realClock is time itself.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(t time.Time, f func()) func() bool {
	return time.AfterFunc(time.Until(t), f).Stop
}

// ErrEngineDead is returned by Submit, and set on in-flight outputs, once the
// engine has been killed (vLLM's EngineDeadError).
var ErrEngineDead = errors.New("engine dead: EngineCore encountered an issue")

// ErrEngineClosed is set on the outputs of requests still in flight when
// Close is called, and returned by Submit afterwards.
var ErrEngineClosed = errors.New("engine closed: the server is shutting down")

// RequestError is a request the engine refuses (HTTP Status with vLLM's
// Message, e.g. 400 for a request longer than max_model_len).
type RequestError struct {
	Status  int
	Message string
}

func (e *RequestError) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// Request is one generation request, already tokenized.
type Request struct {
	ID           string
	PromptTokens []int32 // ids in [0, vocab)
	MaxTokens    int     // 0 = absent: vLLM's default, max_model_len − len(prompt)
	MinTokens    int     // no EOS before this many tokens
	IgnoreEOS    bool    // generate exactly MaxTokens (finish "length")
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
	// FinishReason is "stop", "length" or "abort" on the last output. With
	// "stop" the last token is the model's EOS id (Info.EOSTokenID); vLLM counts
	// it in completion_tokens but does not detokenize it.
	FinishReason string
	// CachedPromptTokens is how many prompt tokens came from the prefix cache
	// (set on the first output).
	CachedPromptTokens int
	// Err ends the request with an error (engine dead, aborted by shutdown).
	Err error
}

// Info describes a running engine: the effective configuration and what the
// engine derived from it.
type Info struct {
	Config          Config // Defaults applied
	GPU             GPUPreset
	Model           ModelPreset // the shape simulated
	ModelNote       string      // set when Config.Model has no preset and the default shape is used
	GPUPresets      []string
	ModelPresets    []string
	NumGPUBlocks    int
	NumCPUBlocks    int
	BlockSize       int
	KVBytesPerToken int   // per GPU
	KVCacheTokens   int   // NumGPUBlocks × BlockSize
	WeightBytes     int64 // per GPU
	CacheDtype      string
	EOSTokenID      int32
	VocabSize       int
	Speculative     *SpecConfig // nil when off
	ModelName       string      // the model_name metric label
}
