package serverfamily

// SGLang is SGLang's family (python3 -m sglang.launch_server, the
// lmsysorg/sglang images), read from SGLang's own source at commit
// 00ae9c1590d2d0bb6c0bfff39e312c34ae3dd538
// (python/sglang/srt/metrics/collector.py: TokenizerMetricsCollector and
// SchedulerMetricsCollector) and its server arguments
// (python/sglang/srt/server_args.py; docs/server-families.md says which
// version and what has no equivalent). Treat it as read-only.
var SGLang = Register(&Family{
	Name:  "SGLang",
	Key:   "sglang",
	Image: "lmsysorg/sglang:v0.5.5",
	// SGLang logs its KV pool in tokens and GB, not vLLM's GiB line:
	// kv-blocks/GiB is not computed for it.
	Metrics: Metrics{
		Prefix:  "sglang:",
		Renames: sglangRenamed,
		Missing: sglangMissing,
	},
	Launches: []Launch{
		// `python3 -m sglang.launch_server --model-path MODEL --host
		// 0.0.0.0 --port 8000 --enable-metrics FLAGS...`: /metrics is off
		// unless asked for.
		{Name: "launch_server", Entrypoint: []string{"python3", "-m", "sglang.launch_server"},
			ModelFlag: "model-path", HostFlag: "host", PortFlag: "port", Always: []string{"enable-metrics"},
			Use: "python3 -m sglang.launch_server --model-path MODEL ..."},
	},
	Env: map[string]string{"DO_NOT_TRACK": "1"},
	Flags: Flags{
		Known: sglangKnownFlags,
		// SGLang's booleans are store_true flags: false renders nothing.
		Negatable: map[string]bool{},
		Reserved: map[string]string{
			"host":           "the backend binds the server itself",
			"port":           "the backend binds the server itself",
			"model-path":     "set the model with the top-level model: key (or override it with VLLMPERF_MODEL)",
			"enable-metrics": "the launch layout always passes it: the suite reads /metrics",
		},
		BatchCap: "max-running-requests",
	},
	// SGLang's OpenAI protocol takes vLLM's sampling extras, continuous
	// usage in stream_options, and response_format schemas (its grammar
	// backend).
	Extras: Extras{MinTokens: "min_tokens", IgnoreEOS: "ignore_eos", ContinuousUsage: "continuous_usage_stats", GuidedDecoding: true},
})

// sglangRenamed maps SGLang's names onto the canonical ones where the
// meaning is the same (collector.py). prompt_tokens_total,
// generation_tokens_total, time_to_first_token_seconds,
// inter_token_latency_seconds and e2e_request_latency_seconds are already
// the canonical names; its other series (cache_hit_rate, gen_throughput,
// num_used_tokens, ...) have no canonical counterpart and are kept under
// their own names.
var sglangRenamed = map[string]string{
	"num_running_reqs":             "num_requests_running",
	"num_queue_reqs":               "num_requests_waiting",
	"token_usage":                  "kv_cache_usage_perc",
	"cached_tokens_total":          "prompt_tokens_cached_total",
	"num_requests_total":           "request_success_total",
	"queue_time_seconds":           "request_queue_time_seconds",
	"num_retracted_requests_total": "num_preemptions_total",
	"prompt_tokens_histogram":      "request_prompt_tokens",
	"generation_tokens_histogram":  "request_generation_tokens",
}

// sglangMissing are the canonical metrics SGLang does not expose in its
// default configuration (prompt_tokens_histogram and
// generation_tokens_histogram only with --collect-tokens-histogram).
var sglangMissing = []string{
	"num_requests_waiting_by_reason", "cache_config_info", "lora_requests_info",
	"prefix_cache_queries_total", "prefix_cache_hits_total",
	"spec_decode_num_drafts_total", "spec_decode_num_draft_tokens_total",
	"spec_decode_num_accepted_tokens_total", "spec_decode_num_accepted_tokens_per_pos_total",
	"request_time_per_output_token_seconds", "request_prefill_time_seconds",
	"request_decode_time_seconds", "request_inference_time_seconds",
	"iteration_tokens_total", "request_prompt_tokens", "request_generation_tokens",
	"request_params_max_tokens",
}

// sglangKnownFlags are the launch_server flags (without their dashes) a
// profile may name: ServerArgs' fields (server_args.py), model, memory and
// scheduling, parallelism. A flag missing here goes under extra_args:.
var sglangKnownFlags = map[string]bool{
	// Model and tokenizer.
	"model-path": true, "tokenizer-path": true, "tokenizer-mode": true, "skip-tokenizer-init": true,
	"load-format": true, "trust-remote-code": true, "context-length": true, "is-embedding": true,
	"revision": true, "model-impl": true, "json-model-override-args": true,
	// Quantization and data type.
	"dtype": true, "quantization": true, "kv-cache-dtype": true,
	// Memory and scheduling.
	"mem-fraction-static": true, "max-running-requests": true, "max-queued-requests": true,
	"max-total-tokens": true, "chunked-prefill-size": true, "max-prefill-tokens": true,
	"schedule-policy": true, "schedule-conservativeness": true, "page-size": true,
	"disable-radix-cache": true, "radix-eviction-policy": true, "disable-overlap-schedule": true,
	"num-continuous-decode-steps": true, "enable-mixed-chunk": true,
	// Parallelism and device.
	"tp-size": true, "pp-size": true, "dp-size": true, "random-seed": true,
	"watchdog-timeout": true,
	// Observability and serving.
	"host": true, "port": true, "enable-metrics": true,
}
