// Package pipeline runs one scenario point against one vLLM server: the
// one place where a run's stages are wired together. `vllmperf run` and
// the suite (perf_test.go through package suite) both call Run; neither
// wires a stage of its own.
//
// The pipeline, step by step (README.md and docs/README.md are the
// user's view of it; CONTRIBUTING.md says how to add to it):
//
//  1. profile → server. The caller starts (or reaches) a server for a
//     profile with package server and hands Run the server.Server: its
//     base URL, its /metrics URL and its served model name. A fleet
//     reached by URL is read where server.MetricsOf says: its replicas'
//     /metrics summed (scrape.Fleet) or its Prometheus (scrape.Prometheus),
//     kept to the measured model's series (metricsource.go).
//  2. scenario → workload. The point's request classes (package scenario,
//     built from fixtures/) become a workload.Mix: request i is a pure
//     function of i, with the run's nonce at the start of every prompt so
//     that runs never share a prefix by accident. When the server serves
//     POST /tokenize, the vocabulary is measured on its model (the prompts
//     are rebuilt to its tokens a word when that is not one) and every
//     request is counted before the load, the counts compared with the
//     usage after it (lengths.go, result.Result.Lengths).
//  3. client. An openai.Client streams each request and records a
//     sample.Sample: send time, each content-bearing chunk, usage, or the
//     failure as data with a kind. Connections for the run's concurrency are
//     opened first (Preconnect) so TCP set-up is not in the first TTFTs.
//  4. scrape, before. A snapshot of /metrics (package scrape) before the
//     first request, warm-up included.
//  5. load, with the sampler. Package load sends warm-up requests one at a
//     time, then the measured phase closed loop (N in flight) or open loop
//     (arrivals at a rate); meanwhile a scrape.Sampler records running,
//     waiting, KV-cache usage and tokens/s per window.
//  6. probe. When requests failed, server.Probe checks that the server
//     still serves: one that exited or whose /health no longer answers 200
//     is result.Result.ServerDown, with its last log lines.
//  7. drain and scrape, after. Once the load is done, /metrics is polled
//     until running and waiting fall to 0 (or the drain timeout passes):
//     the last poll is the after snapshot, and Diff gives the counter and
//     histogram deltas of exactly this run.
//  8. stats. stats.SummarizeWith computes vLLM's figures over the measured
//     samples (and per class when the point mixes classes); a class sent
//     with ignore_eos promises its max_tokens, and shorter outputs are
//     counted and warned about.
//
// Run returns a *result.Result (package run/result), which is all a
// reader of the run imports. What happens next is the caller's:
// Result.Metrics gives the bench units (docs/bench-format.md), package
// check asserts the server's counters and KV-cache behaviour against
// thresholds.yaml, package knee reads a sweep, and package record writes
// it into the results folder.
//
// Errors: Run returns an error only when the run cannot start (bad point,
// no model). Failed requests are samples with an error; a scrape failure is
// Result.ScrapeErr, which every check that needs the metrics reports as a
// failure, never a pass.
//
// # Where the packages are
//
// The packages are grouped by area (vocab, request, target, run, results,
// gate, orchestrate, the simulator, cmd): docs/architecture.md draws the
// areas and the way imports may go, and lists every package's folder. It
// is the one map: internal/docfigures/architecture_test.go generates it
// from go list and fails when an import breaks its rules.
package pipeline
