package serverfamily_test

import "github.com/vllmperf/vllmperf/internal/target/serverfamily"

// TinyServe is a made-up server family added the way CONTRIBUTING.md's
// recipe says, and nothing more: this one file declaring and registering
// the value (as vllm.go and sglang.go do) and its profiles under
// testdata/profiles/tinyserve/ (scenarios/profiles/tinyserve/ for a
// shipped one). recipe_test.go drives it through profile parsing, the
// container launch and the /metrics mapping without editing any other
// package.
var TinyServe = serverfamily.Register(&serverfamily.Family{
	Name:  "TinyServe",
	Key:   "tinyserve",
	Image: "example.org/tinyserve:1.0",
	Metrics: serverfamily.Metrics{
		Prefix: "tiny:",
		Renames: map[string]string{
			"busy_slots":       "num_requests_running",
			"backlog":          "num_requests_waiting",
			"out_tokens_total": "generation_tokens_total",
			"in_tokens_total":  "prompt_tokens_total",
		},
		Missing: []string{"kv_cache_usage_perc", "cache_config_info"},
	},
	Launches: []serverfamily.Launch{
		{Name: "tiny", Entrypoint: []string{"tiny-serve"}, ModelFlag: "ckpt", PortFlag: "bind-port",
			Always: []string{"metrics"}, Use: "tiny-serve --ckpt MODEL --bind-port PORT --metrics ..."},
	},
	Env: map[string]string{"TINY_TELEMETRY": "off"},
	Flags: serverfamily.Flags{
		Known:     map[string]bool{"slots": true, "kv-mb": true, "warm": true},
		Negatable: map[string]bool{"warm": true},
		Reserved:  map[string]string{"bind-port": "the backend binds the server itself", "ckpt": "set the model with model:"},
		BatchCap:  "slots",
	},
	Extras: serverfamily.Extras{MinTokens: "min_new", IgnoreEOS: "no_eos"},
})
