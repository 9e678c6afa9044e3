// Package harness runs one scenario point against one vLLM server: the one
// place where the pipeline's stages are wired together. `vllmperf run` and
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
//     usage after it (lengths.go, Result.Lengths).
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
//     is Result.ServerDown, with its last log lines.
//  7. drain and scrape, after. Once the load is done, /metrics is polled
//     until running and waiting fall to 0 (or the drain timeout passes):
//     the last poll is the after snapshot, and Diff gives the counter and
//     histogram deltas of exactly this run.
//  8. stats. stats.SummarizeWith computes vLLM's figures over the measured
//     samples (and per class when the point mixes classes); a class sent
//     with ignore_eos promises its max_tokens, and shorter outputs are
//     counted and warned about.
//
// What happens next is the caller's: Result.Metrics gives the bench units
// (docs/bench-format.md), package check asserts the server's counters and
// KV-cache behaviour against thresholds.yaml, package knee reads a sweep,
// and package results writes the results folder.
//
// Errors: Run returns an error only when the run cannot start (bad point,
// no model). Failed requests are samples with an error; a scrape failure is
// Result.ScrapeErr, which every check that needs the metrics reports as a
// failure, never a pass.
//
// # The map
//
// One package per job, and one home per name (CONTRIBUTING.md): a name that more
// than one package speaks is declared in one of the leaves below and
// imported.
//
// The names, leaves that import nothing of the pipeline:
//
//	units       every bench unit: name, direction, kind, table label and
//	            digits; docs/bench-format.md's table is tested against it
//	benchname   the one builder and parser of profile=P/scenario=S/POINT
//	serverfamily what is vLLM's, in one value (serverfamily.VLLM): the
//	            metric prefix and the one rename table (deploy/ is checked
//	            against it), the launch command, the known flags, the
//	            request extras; the stages take a family, vLLM by default
//	scrape      /metrics: the canonical metric names (constants), the
//	            parser (a family's names onto them), the sampler;
//	            its leaf simpace names vllm-sim's own pace series, which the
//	            simulator writes and the sim_real_time check reads
//	thresholds  thresholds.yaml, embedded as the defaults (gate, checks,
//	            knee, diagnose); a file given must exist
//
// One run, along the flow:
//
//	profile, server, workload, scenario, openai, load, sample, stats
//	            the stages above; pipeline.Run wires them. A stage a
//	            command configures declares and checks its own flags'
//	            values (Flags: server, load, workload, openai); the
//	            command binds them (cmd/vllmperf/internal/cliflags) and
//	            its runflags gathers them for one run
//	gateway     how a server is reached: the one HTTP transport of a run
//	            (completions, models, tokenize, scrapes), with a
//	            gateway's headers and certificates and one proxy rule
//	telemetry   the GPUs during a run: nvidia-smi, dcgm-exporter; throttle
//	            and foreign-process evidence, average power, energy
//	runnerctl   the runner control: a fixed CPU workload timed in the
//	            client before, during and after a run (runner-cpu-ns),
//	            so the gate can name a slower runner
//	dataset     the prompts users bring: ShareGPT, JSONL, timed traces,
//	            filtered and sampled (a scenario's dataset: classes)
//	schema      structured output's JSON schemas and the check of an
//	            output against one (openai fails a mismatch: ErrSchema)
//	check       the server-side assertions and the one run verdict
//	            (Judge, built on Ended, ErrorRate) that vllmperf run
//	            and the suite's requests check share; the GPU checks
//	            over the telemetry
//	vllmfmt     one run in vLLM's own formats: bench serve's text summary,
//	            --save-result JSON, samples as JSON lines
//	torchprof   vLLM's torch profiler over a steady window of a run
//	            (/start_profile, /stop_profile) and the Chrome traces it
//	            leaves (WithTorchProfile, vllmperf run --torch-profile)
//
// Many runs:
//
//	suite       the suite's sessions (perf_test.go is its wiring)
//	envvar      the VLLMPERF_ settings, declared once: name, default, doc,
//	            and whether make bench resets them (SUITE_DEFAULTS)
//	knee        a sweep's knee
//	capacity    the capacity under the goodput SLO: bracketing, then
//	            bisection over rate or concurrency (vllmperf capacity)
//	results     the results folder: write and read it; its records stand
//	            alone (no run pipeline, no simulator: a test holds it), and
//	            results/record converts a run, a knee, a search to them
//	verdict     the verdict words (PASS, FAIL, INVALID, NOT_AVAILABLE,
//	            INCONCLUSIVE, REGRESSION, ...), the check line, a gate
//	            command's Outcome and how it publishes a report (Output:
//	            --format, the step summary; gate, history check, upgrade
//	            and perf-gate use it): a leaf every reader shares
//	diagnose    the seed article's bottleneck rules over a results folder
//	report      a results folder as people read it: text, report.md,
//	            report.html (its tables declared once, as columns)
//	gate        benchmark files against a baseline (benchmath), the
//	            benchfmt config lines both sides must share (benchconfig.go)
//	gatequality the gate's quality as the suite runs: whole-suite sides
//	            generated from a recorded suite run (per-point runs
//	            resampled, one start factor per profile and side)
//	perfgate    make perf-gate: plan, the suite, the gate against the
//	            baseline kept per key (recorded by a key's first run)
//	upgrade     the interleaved old-versus-new image gate
//	history     every run kept; change points over time
//	clientbench the client's own capacity (openai/clientbench: benchmarks)
//
// Outside the harness: internal/vocab/exitstatus (the one exit-status policy:
// usage 2, inconclusive 3, 128+N after a signal, and the signal handling),
// internal/outfile (a command's output files, written atomically),
// internal/progress (the run's progress line), and cmd/vllmperf: cobra
// wiring of these packages, kept under 600 lines by a test.
//
// Words: thresholds.yaml's overrides: scope settings to profiles,
// scenarios and metrics; the diagnosis's rules are the seed article's
// bottleneck rules; deploy/'s rules are Prometheus recording and alerting
// rules; the simulator's argument checks are package vllmsim/argcheck.
package pipeline
