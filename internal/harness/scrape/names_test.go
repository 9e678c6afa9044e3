package scrape

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/harness/serverfamily"
)

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

// TestFamilyNamesAreCanonical: every name vLLM's family maps a renamed
// metric onto is one of the canonical names this package reads, and none
// of its removed metrics is one.
func TestFamilyNamesAreCanonical(t *testing.T) {
	t.Parallel()
	fam := serverfamily.VLLM
	for old, canonical := range fam.Renames() {
		if _, ok := known[canonical]; !ok {
			t.Errorf("rename %s → %s: %s is not a canonical name of this package", old, canonical, canonical)
		}
	}
	for _, name := range fam.RemovedNames() {
		if _, ok := known[name]; ok {
			t.Errorf("removed metric %s is a canonical name", name)
		}
	}
}
