package serverfamily

import "regexp"

// VLLM is vLLM's family (V1 engine, the vllm/vllm-openai images): the
// default. Treat it as read-only: a variant is a new value (llmd.Family
// copies the parts it keeps).
var VLLM = Register(&Family{
	Name: "vLLM",
	Key:  "vllm",
	// The pinned image the container backend runs (vLLM's flags and
	// names here follow v0.11).
	Image: "vllm/vllm-openai:v0.11.0",
	// vLLM V1's start-up line with the KV cache's size
	// (vllm/v1/worker/gpu_worker.py).
	Logs: Logs{KVCacheGiB: regexp.MustCompile(`Available KV cache memory: ([0-9.]+) GiB`)},
	Metrics: Metrics{
		Prefix:             "vllm:",
		Renames:            vllmRenamed,
		Removed:            vllmRemovedV0,
		PrefixCachingLabel: "enable_prefix_caching",
	},
	Launches: []Launch{
		// `vllm serve MODEL --host 0.0.0.0 --port 8000 FLAGS...` (vLLM >=
		// 0.5; the image's own ENTRYPOINT is overridden so that any tag
		// works).
		{Name: "serve", Entrypoint: []string{"vllm", "serve"}, HostFlag: "host", PortFlag: "port",
			Use: "vllm serve MODEL ..., vLLM >= 0.5"},
		// `python3 -m vllm.entrypoints.openai.api_server --model MODEL
		// ...`, for old images without the vllm CLI.
		{Name: "api_server", Entrypoint: []string{"python3", "-m", "vllm.entrypoints.openai.api_server"}, ModelFlag: "model", HostFlag: "host", PortFlag: "port",
			Use: "python3 -m vllm.entrypoints.openai.api_server --model MODEL ..., older vLLM images"},
		// The image's own ENTRYPOINT with `--model MODEL --port 8000
		// FLAGS...`: a vLLM-compatible image whose server is not vLLM's
		// (no --host: llm-d-inference-sim has none and listens on every
		// interface of the container itself).
		{Name: "image", ModelFlag: "model", PortFlag: "port",
			Use: "the image's own ENTRYPOINT with --model MODEL --port 8000 ..., a vLLM-compatible server such as llm-d-inference-sim"},
	},
	// Keep the server from phoning home: only the model download leaves
	// the machine, and only on runners that allow it.
	Env: map[string]string{"VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"},
	Flags: Flags{
		Known:     vllmKnownFlags,
		Negatable: vllmNegatableFlags,
		Reserved:  vllmReservedFlags,
		BatchCap:  "max-num-seqs",
	},
	// vLLM's sampling extras (vllm/entrypoints/openai/protocol.py) and
	// stream_options' continuous usage (vllm-reference.md §3).
	Extras: Extras{MinTokens: "min_tokens", IgnoreEOS: "ignore_eos", ContinuousUsage: "continuous_usage_stats", GuidedDecoding: true},
})

// vllmRenamed maps names vLLM deprecated to their V1 replacements
// (vllm-reference.md §2): the cache names were deprecated in 0.9 and gone by
// 0.12, time_per_output_token_seconds deprecated in 0.11 and removed in 0.13.
var vllmRenamed = map[string]string{
	"gpu_cache_usage_perc":           "kv_cache_usage_perc",
	"gpu_prefix_cache_queries_total": "prefix_cache_queries_total",
	"gpu_prefix_cache_hits_total":    "prefix_cache_hits_total",
	"time_per_output_token_seconds":  "inter_token_latency_seconds",
}

// vllmRemovedV0 are V0-engine metrics with no V1 counterpart. They are reported
// in Snapshot.Ignored, never as an error.
var vllmRemovedV0 = map[string]bool{
	"num_requests_swapped":                 true,
	"cpu_cache_usage_perc":                 true,
	"gpu_prefix_cache_hit_rate":            true,
	"cpu_prefix_cache_hit_rate":            true,
	"avg_prompt_throughput_toks_per_s":     true,
	"avg_generation_throughput_toks_per_s": true,
	"spec_decode_draft_acceptance_rate":    true,
	"spec_decode_efficiency":               true,
	"spec_decode_num_emitted_tokens_total": true,
	"model_forward_time_milliseconds":      true,
	"model_execute_time_milliseconds":      true,
	"time_in_queue_requests":               true,
}

// vllmKnownFlags lists the `vllm serve` flags (without their leading dashes) that a
// profile may name under flags:. It follows vLLM's EngineArgs and the OpenAI
// frontend's argument parser (vllm/engine/arg_utils.py,
// vllm/entrypoints/openai/cli_args.py, v0.11). A flag a newer vLLM adds and
// that is missing here goes under extra_args:, which is passed verbatim.
var vllmKnownFlags = map[string]bool{
	// Model and tokenizer.
	"model": true, "served-model-name": true, "tokenizer": true, "tokenizer-mode": true,
	"tokenizer-revision": true, "revision": true, "code-revision": true, "trust-remote-code": true,
	"dtype": true, "seed": true, "max-model-len": true, "quantization": true,
	"hf-config-path": true, "hf-token": true, "hf-overrides": true, "download-dir": true,
	"load-format": true, "config-format": true, "skip-tokenizer-init": true,
	"enforce-eager": true, "max-seq-len-to-capture": true, "max-logprobs": true,
	"logprobs-mode": true, "disable-sliding-window": true, "disable-cascade-attn": true,
	"generation-config": true, "override-generation-config": true, "enable-sleep-mode": true,
	"model-impl": true, "override-attention-dtype": true, "allowed-local-media-path": true,
	"runner": true, "convert": true, "task": true, "pooler-config": true, "logits-processors": true,
	"io-processor-plugin": true, "enable-prompt-embeds": true, "max-num-partial-prefills": true,
	"max-long-partial-prefills": true, "long-prefill-token-threshold": true,
	// Cache.
	"block-size": true, "gpu-memory-utilization": true, "kv-cache-memory": true,
	"swap-space": true, "kv-cache-dtype": true, "num-gpu-blocks-override": true,
	"enable-prefix-caching": true, "prefix-caching-hash-algo": true, "cpu-offload-gb": true,
	"calculate-kv-scales": true, "kv-sharing-fast-prefill": true, "mamba-cache-dtype": true,
	"mamba-ssm-cache-dtype": true, "kv-offloading-size": true, "kv-offloading-backend": true,
	// Scheduler.
	"max-num-batched-tokens": true, "max-num-seqs": true, "enable-chunked-prefill": true,
	"scheduling-policy": true, "scheduler-cls": true, "num-lookahead-slots": true,
	"scheduler-delay-factor": true, "preemption-mode": true, "disable-chunked-mm-input": true,
	"disable-hybrid-kv-cache-manager": true, "async-scheduling": true, "cuda-graph-sizes": true,
	"stream-interval": true,
	// Parallelism.
	"tensor-parallel-size": true, "pipeline-parallel-size": true, "data-parallel-size": true,
	"data-parallel-rank": true, "data-parallel-size-local": true, "data-parallel-address": true,
	"data-parallel-rpc-port": true, "data-parallel-backend": true, "data-parallel-hybrid-lb": true,
	"data-parallel-start-rank": true, "headless": true, "api-server-count": true,
	"enable-expert-parallel": true, "enable-eplb": true, "eplb-config": true,
	"distributed-executor-backend": true, "max-parallel-loading-workers": true,
	"ray-workers-use-nsight": true, "disable-custom-all-reduce": true, "worker-cls": true,
	"worker-extension-cls": true, "enable-dbo": true, "decode-context-parallel-size": true,
	"all2all-backend": true, "nnodes": true, "node-rank": true, "master-addr": true, "master-port": true,
	// Speculative decoding, LoRA, multimodal, compilation, observability.
	"speculative-config": true, "enable-lora": true, "max-loras": true, "max-lora-rank": true,
	"lora-dtype": true, "max-cpu-loras": true, "fully-sharded-loras": true, "lora-modules": true,
	"limit-mm-per-prompt": true, "mm-processor-kwargs": true, "mm-processor-cache-gb": true,
	"disable-mm-preprocessor-cache": true, "media-io-kwargs": true, "mm-encoder-tp-mode": true,
	"interleave-mm-strings": true, "skip-mm-profiling": true, "compilation-config": true,
	"kv-transfer-config": true, "kv-events-config": true, "additional-config": true,
	"structured-outputs-config": true, "reasoning-parser": true, "guided-decoding-backend": true,
	"otlp-traces-endpoint": true, "collect-detailed-traces": true,
	"show-hidden-metrics-for-version": true, "disable-log-stats": true, "enable-log-requests": true,
	"disable-log-requests": true, "max-log-len": true, "enable-prompt-tokens-details": true,
	"enable-server-load-tracking": true, "enable-force-include-usage": true,
	"enable-request-id-headers": true, "enable-log-outputs": true, "log-error-stack": true,
	// OpenAI frontend.
	"host": true, "port": true, "uds": true, "api-key": true, "allowed-origins": true,
	"allowed-methods": true, "allowed-headers": true, "allow-credentials": true,
	"uvicorn-log-level": true, "disable-uvicorn-access-log": true, "chat-template": true,
	"chat-template-content-format": true, "response-role": true, "ssl-keyfile": true,
	"ssl-certfile": true, "ssl-ca-certs": true, "ssl-cert-reqs": true, "root-path": true,
	"middleware": true, "return-tokens-as-token-ids": true, "disable-frontend-multiprocessing": true,
	"enable-auto-tool-choice": true, "tool-call-parser": true, "tool-parser-plugin": true,
	"tool-server": true, "exclude-tools-when-tool-choice-none": true, "expand-tools-even-if-tool-choice-none": true,
	"log-config-file": true, "h11-max-incomplete-event-size": true, "h11-max-header-count": true,
	"enable-tokenizer-info-endpoint": true, "disable-fastapi-docs": true, "enable-ssl-refresh": true,
	"max-waiting-queue-length": true,
}

// vllmNegatableFlags are vLLM's argparse.BooleanOptionalAction flags: they take
// a --no-NAME form. A profile value of false renders that form; false for
// any other boolean flag renders nothing (the flag's default is off).
var vllmNegatableFlags = map[string]bool{
	"enable-prefix-caching":           true,
	"enable-chunked-prefill":          true,
	"async-scheduling":                true,
	"disable-hybrid-kv-cache-manager": true,
	"enable-dbo":                      true,
	"calculate-kv-scales":             true,
	"enforce-eager":                   true,
	"trust-remote-code":               true,
	"enable-expert-parallel":          true,
	"enable-eplb":                     true,
	"enable-lora":                     true,
	"fully-sharded-loras":             true,
	"enable-sleep-mode":               true,
	"skip-tokenizer-init":             true,
	"disable-log-stats":               true,
	"enable-log-requests":             true,
	"enable-prompt-embeds":            true,
}

// vllmReservedFlags are set by the backend that starts the server; a profile
// that sets them would fight the harness over the listening address or the
// model.
var vllmReservedFlags = map[string]string{
	"host":  "the backend binds the server itself",
	"port":  "the backend binds the server itself",
	"model": "set the model with the top-level model: key (or override it with VLLMPERF_MODEL)",
	"uds":   "the harness talks TCP to the server",
}
