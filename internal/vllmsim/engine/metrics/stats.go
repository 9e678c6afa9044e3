package metrics

// The figures of vllm-sim's periodic stats log line.
const (
	StatPrompt     = "prompt"
	StatGeneration = "generation"
	StatRunning    = "running"
	StatWaiting    = "waiting"
	StatKVUsage    = "kv_usage"
)

// statSeries maps each family's series (vLLM's current and 0.9 names,
// SGLang's) to the stats-line figure it gives.
var statSeries = map[string]string{
	"vllm:prompt_tokens_total":       StatPrompt,
	"vllm:prompt_tokens":             StatPrompt,
	"vllm:generation_tokens_total":   StatGeneration,
	"vllm:generation_tokens":         StatGeneration,
	"vllm:num_requests_running":      StatRunning,
	"vllm:num_requests_waiting":      StatWaiting,
	"vllm:kv_cache_usage_perc":       StatKVUsage,
	"vllm:gpu_cache_usage_perc":      StatKVUsage,
	"sglang:prompt_tokens_total":     StatPrompt,
	"sglang:generation_tokens_total": StatGeneration,
	"sglang:num_running_reqs":        StatRunning,
	"sglang:num_queue_reqs":          StatWaiting,
	"sglang:token_usage":             StatKVUsage,
}

// StatOf is the stats-line figure the series name gives, or "".
func StatOf(name string) string { return statSeries[name] }
