package scrape

import "testing"

func TestKnown(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"vllm:" + NumRequestsRunning:                true,  // a V1 gauge
		"vllm:prefix_cache_hits":                    true,  // a counter's PromQL base
		"vllm:gpu_prefix_cache_hits_total":          true,  // renamed
		"vllm:time_per_output_token_seconds_bucket": true,  // a renamed histogram's series
		"vllm:num_requests_swapped":                 true,  // removed, still a vLLM name
		"vllm:num_preemption_total":                 false, // misspelt
		"vllm:generation_tokens_total_bucket":       false, // not a histogram
	} {
		if got := Known(name); got != want {
			t.Errorf("Known(%q) = %v, want %v", name, got, want)
		}
	}
}
