// Package engine is the simulated vLLM V1 engine: a continuous-batching
// scheduler with a per-step token budget, KV-cache blocks with prefix caching
// and preemption, a roofline timing model with GPU and model presets,
// speculative decoding, and the Prometheus metrics of package metrics (vLLM's
// or, with --sim-family sglang, SGLang's).
//
// The engine works on token ids; text and HTTP live in package vllmsim.
//
// # Files
//
//   - config.go: Config, its defaults (DefaultConfig, Defaults) and its
//     validation, the one place vllm-sim's engine flags are checked.
//   - spec.go: the --speculative-config JSON.
//   - resolve.go: what a valid Config implies (presets, KV blocks, memory).
//   - request.go: Request, Output and the checks vLLM applies to a request.
//   - base.go: what both engines share: Submit, abort, token emission,
//     metrics bookkeeping, shutdown; the Core interface.
//   - engine.go, scheduler.go, timing.go, kvcache.go: Engine, the
//     continuous-batching engine with the roofline timing model.
//   - fixed.go: Fixed, the fixed-timing engine (--sim-fixed-ttft/-itl).
//   - clock.go: the clock and the precise real-time wait.
//   - pace.go: the real-time loop's account of the time it loses to the
//     host (the vllmperf_sim_* metrics, BehindThreshold).
//   - lora.go: LoRA adapters, max_loras, and vllm:lora_requests_info's values.
//   - outbox.go: non-blocking delivery of outputs to slow readers.
//   - resolve.go also fills metrics.Setup, what package metrics needs.
//   - presets.go: GPU and model presets.
package engine
