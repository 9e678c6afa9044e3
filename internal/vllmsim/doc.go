// Package vllmsim is a simulated vLLM OpenAI-compatible server: the HTTP
// API, start-up, fault injection and /metrics, over the simulated engine of
// package engine. The vllm-sim binary and the harness's in-process backend
// both use it.
//
// # Packages
//
// Imports flow one way: vllmsim imports its subpackages, which import
// nothing of it.
//
//   - config: Options, the flag table (ParseArgs, Usage) and validation.
//   - engine (and its subpackages): the simulated engine and its metrics.
//   - tokenizer: the word tokenizer and the output words.
//   - schemadoc: the JSON document of a structured-output request.
//   - torchtrace: the torch profiler traces of /start_profile, /stop_profile.
//   - simpace: the names of the simulator's pace series.
//   - argcheck, calibration: value checks; the published figures the
//     timing model is fitted to.
//
// # Command line
//
// config.ParseArgs (and New) take vllm serve's arguments: the model as the first
// positional argument or --model, "--flag value" or "--flag=value",
// underscores for dashes, --no-NAME for vLLM's BooleanOptionalAction flags,
// -tp. Unknown flags fail like argparse ("unrecognized arguments: ...") with a
// did-you-mean hint. The simulator's own flags start with --sim-; config.Usage lists
// them all.
//
// # Endpoints
//
//   - POST /v1/chat/completions, POST /v1/completions: streamed (SSE) or not,
//     vLLM's JSON shapes. A streamed chat starts with a chunk carrying only
//     {"role":"assistant","content":""} (sent with the first engine output),
//     then one chunk per engine output (several tokens when the engine emits
//     several, e.g. speculative decoding), the last content chunk carrying
//     finish_reason; stream_options.include_usage adds a chunk with empty
//     choices and usage; continuous_usage_stats puts cumulative usage on
//     every chunk; the stream ends "data: [DONE]". An engine error mid-stream
//     arrives as data: {"error":{...}} followed by [DONE]. Accepted fields:
//     model (optional: the first served name), messages / prompt (a string,
//     token ids, or a one-element list), max_tokens, max_completion_tokens,
//     min_tokens, ignore_eos, temperature (>= 0; 0 decodes greedily: the same
//     output for the same prompt on every start, whatever --sim-seed), n (1 only),
//     stream, stream_options; others are ignored, as vLLM ignores them.
//     Text is tokenized one token per white-space separated word, into the
//     served model's vocabulary (tokenizer.Tokenizer; its preset's size), so any text
//     prompt suits any model; a token-id prompt with an id outside that
//     vocabulary gets vLLM's 400 "Token id N is out of vocabulary".
//   - GET /v1/models: the served names, owned_by "vllm", with max_model_len.
//   - GET /health: 200 when ready; 503 during --sim-startup, after the
//     engine died and while shutting down. GET|POST /ping: the same.
//   - GET /version: {"version":"0.11.0-sim"} (Version; "0.9.2-sim" with
//     --sim-metrics-version 0.9; "X.Y.Z-sim" with --sim-vllm-version X.Y.Z).
//   - GET /metrics: the engine's registry in the Prometheus text format:
//     vLLM's metrics (SGLang's with --sim-family sglang: package
//     engine/metrics), and the simulator's own vllmperf_sim_* series
//     saying whether the engine kept real time (engine.MetricLostSeconds;
//     beyond engine.BehindThreshold the log warns "Behind real time").
//
// Errors are vLLM's {"error":{"message","type","param","code"}}: 400
// BadRequestError (including the engine's "maximum context length" message),
// 404 NotFoundError "The model `x` does not exist.", 500 InternalServerError.
// With --api-key every /v1/* path needs "Authorization: Bearer KEY" and
// answers 401 {"error":"Unauthorized"} otherwise; /health, /ping, /version and
// /metrics stay open. A client that disconnects aborts its request (the
// engine counts finished_reason "abort").
//
// # Faults
//
// --sim-fault-* flags inject failures (all in faults.go), drawn per request
// from a generator seeded by --sim-seed: 500 and 429 answers, a connection
// cut mid-response (no finish_reason, usage or [DONE]: the client reads an
// unexpected EOF), a stream that pauses once, usage.completion_tokens
// reported off by a fixed skew (the engine's counter keeps the truth); a
// slow, malformed or incomplete (families left out) /metrics; a restart
// after N finished requests (fresh engine and registry: every counter back
// to 0), and an engine death after N (/health 503, requests 500). Restart
// and death take effect before the N-th request's last bytes are written,
// so a client that has read its response already sees them.
//
// # Configuration
//
// config.Options is the whole configuration: engine.Config (the engine's
// flags) embedded, the server's settings and the faults. The flag table
// writes into it and Options.Validate checks it (the engine's part through
// engine.Config.Validate), so a value is taken or refused alike from the
// command line (New, config.ParseArgs) and from Go (NewWithOptions).
package vllmsim
