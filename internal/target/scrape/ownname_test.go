package scrape

import (
	"strings"
	"testing"
	"time"
)

// TestOwnNameIsNoRename: a family outside vLLM's prefix kept under its
// own name (the simulator's vllmperf_sim_*) is no rename; an old vLLM
// name still is.
func TestOwnNameIsNoRename(t *testing.T) {
	t.Parallel()
	const page = `# TYPE vllmperf_sim_behind_real_time_ratio gauge
vllmperf_sim_behind_real_time_ratio 0
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.5
`
	s, err := Parse(strings.NewReader(page), "test", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, r := range s.Renamed {
		found = append(found, r.Found)
	}
	if len(found) != 1 || found[0] != "vllm:gpu_cache_usage_perc" {
		t.Errorf("Renamed found %v, want only vllm:gpu_cache_usage_perc (the simulator's own family under its own name is no rename)", found)
	}
}
