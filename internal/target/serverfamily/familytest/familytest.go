// Package familytest holds Acme, a server family that exists only for
// tests: a vLLM-compatible server with another metric prefix, its own names
// for two metrics, its own launch command, flags and request extras. Tests
// of the stages that take a family (scrape, server, profile, openai, the
// harness run) drive it through the same paths as vLLM, to show that a
// second family plugs in as a value, with no edit to those stages
// (CONTRIBUTING.md, "Add a server family").
package familytest

import "github.com/vllmperf/vllmperf/internal/target/serverfamily"

// Acme returns the test-only family, a new value on every call:
//
//   - metrics prefixed "acme:", generated tokens exposed as
//     acme:tokens_out_total (canonical generation_tokens_total) and the
//     KV-cache ratio as acme:kv_used_ratio (kv_cache_usage_perc), no
//     removed names, and no cache_config_info label for prefix caching;
//   - launched as `acme-serve --weights MODEL --listen-port PORT FLAGS...`
//     (no host flag), or with the image's own ENTRYPOINT ("image");
//   - flags batch-slots (the batch cap), cache-mb and --[no-]warmup;
//     listen-port and weights are the backend's;
//   - extras min_new_tokens and stop_at_eos_never; no continuous usage.
func Acme() *serverfamily.Family {
	return &serverfamily.Family{
		Name: "Acme",
		Metrics: serverfamily.Metrics{
			Prefix:  "acme:",
			Renames: map[string]string{"tokens_out_total": "generation_tokens_total", "kv_used_ratio": "kv_cache_usage_perc"},
		},
		Launches: []serverfamily.Launch{
			{Name: "acme", Entrypoint: []string{"acme-serve"}, ModelFlag: "weights", PortFlag: "listen-port", Use: "acme-serve --weights MODEL ..."},
			{Name: "image", ModelFlag: "weights", PortFlag: "listen-port", Use: "the image's own ENTRYPOINT"},
		},
		Flags: serverfamily.Flags{
			Known:     map[string]bool{"batch-slots": true, "cache-mb": true, "warmup": true},
			Negatable: map[string]bool{"warmup": true},
			Reserved:  map[string]string{"listen-port": "the backend binds the server itself", "weights": "set the model with the top-level model: key"},
			BatchCap:  "batch-slots",
		},
		Extras: serverfamily.Extras{MinTokens: "min_new_tokens", IgnoreEOS: "stop_at_eos_never"},
	}
}
