package llmd

import (
	"maps"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// Family is llm-d-inference-sim's server family at Version, its
// differences from vLLM (docs/third-party-servers.md) as a value that the
// stages take (server.WithFamily, profile.ParseFor): vLLM's metric prefix
// and names, with the V0 name it still exposes and the metrics it lacks;
// one launch layout, the image's own ENTRYPOINT (which carries
// OfflineFlag) with --model and --port and no --host; its own flags; and
// no continuous usage in the stream (it ignores the field). vllmperf ships
// no family but vLLM's: this one is for the tests that run vllmperf
// against a server it did not write (differences_test.go guards it).
var Family = newFamily()

func newFamily() *serverfamily.Family {
	removed := maps.Clone(serverfamily.VLLM.Metrics.Removed)
	removed["max_num_generation_tokens"] = true // a V0 name it still exposes
	return &serverfamily.Family{
		Name: "llm-d-inference-sim",
		Metrics: serverfamily.Metrics{
			Prefix:  serverfamily.VLLM.Metrics.Prefix,
			Renames: serverfamily.VLLM.Renames(), // time_per_output_token_seconds beside inter_token_latency_seconds
			Removed: removed,
			// cache_config_info has block_size and num_gpu_blocks only.
			PrefixCachingLabel: "",
			// The prefix-cache counters only with --enable-kvcache.
			Missing: []string{"prompt_tokens_cached_total", "num_preemptions_total", "iteration_tokens_total",
				"request_time_per_output_token_seconds", "num_requests_waiting_by_reason",
				"prefix_cache_queries_total", "prefix_cache_hits_total"},
		},
		Launches: []serverfamily.Launch{
			{Name: "image", ModelFlag: cliarg.Model.Arg(), PortFlag: cliarg.Port.Arg(),
				Use: "the image's own ENTRYPOINT, /llm-d-inference-sim " + OfflineFlag + " (llmd.Image), with --model MODEL --port 8000 ..."},
		},
		Env: map[string]string{"DO_NOT_TRACK": "1"},
		Flags: serverfamily.Flags{
			Known: map[string]bool{
				"model": true, "served-model-name": true, "port": true, "max-num-seqs": true,
				"max-waiting-queue-length": true, "max-model-len": true,
				"time-to-first-token": true, "time-to-first-token-std-dev": true,
				"inter-token-latency": true, "inter-token-latency-std-dev": true,
				"prefill-overhead": true, "prefill-time-per-token": true, "prefill-time-std-dev": true,
				"time-factor-under-load": true, "latency-calculator": true, "mode": true, "seed": true,
				"failure-injection-rate": true, "failure-types": true,
				"enable-kvcache": true, "kv-cache-size": true, "block-size": true,
				"enable-prefix-caching": true, "enforce-eager": true, // accepted and ignored
				"force-dummy-tokenizer": true, "startup-duration": true,
			},
			Negatable: map[string]bool{"enable-prefix-caching": true},
			Reserved: map[string]string{
				"port":                  "the backend binds the server itself",
				"model":                 "set the model with the top-level model: key (or override it with VLLMPERF_MODEL)",
				"force-dummy-tokenizer": "the image's ENTRYPOINT passes it, to keep the simulator off the network",
			},
			BatchCap: "max-num-seqs",
		},
		// min_tokens is ignored (sent all the same: harmless);
		// continuous_usage_stats is ignored, so it is not sent; so is
		// response_format (no guided decoding).
		Extras: serverfamily.Extras{MinTokens: "min_tokens", IgnoreEOS: "ignore_eos"},
	}
}
