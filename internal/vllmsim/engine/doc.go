// Package engine is the simulated vLLM V1 engine: a continuous-batching
// scheduler with a per-step token budget, KV-cache blocks with prefix caching
// and preemption, a roofline timing model over GPU and model presets,
// speculative decoding, and Prometheus metrics (vLLM's or, with
// --sim-family sglang, SGLang's).
//
// The engine works on token ids; text and HTTP live in package vllmsim.
//
// # Packages
//
// Its subpackages import nothing of it (imports flow one way):
//
//   - presets: the timing model's data (GPU and model presets, fitted
//     costs and their ranges, the front end's figures, vLLM releases).
//   - kvcache: the KV-cache block pool and its prefix cache.
//   - spec: the --speculative-config JSON.
//   - clock: the clock, the precise real-time wait, and the real-time
//     loop's account of the time it loses to the host (Pace).
//   - metrics: the Prometheus series in each server family's names.
//
// # Files
//
//   - config.go: Config, its defaults (DefaultConfig, Defaults) and its
//     validation, the one place vllm-sim's engine flags are checked.
//   - resolve.go: what a valid Config implies (presets, KV blocks, memory,
//     metrics.Setup).
//   - request.go: Request, Output and the checks vLLM applies to a request.
//   - base.go: what both engines share: Submit, abort, token emission,
//     metrics bookkeeping, shutdown; the Core interface.
//   - engine.go, scheduler.go, timing.go, frontend.go, vision.go: Engine,
//     the continuous-batching engine with the roofline timing model and
//     the API server's front end.
//   - fixed.go: Fixed, the fixed-timing engine (--sim-fixed-ttft/-itl).
//   - simulation.go, steps.go: Simulation, the engine in simulated time,
//     and the steps it reports.
//   - pace.go: the pace series' names and BehindThreshold.
//   - lora.go, pooling.go: LoRA adapters and max_loras; pooling requests.
//   - outbox.go: non-blocking delivery of outputs to slow readers.
package engine
