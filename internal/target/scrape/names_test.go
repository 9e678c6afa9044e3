package scrape

import (
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily/familytest"
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

// TestParseForFamily: one exposition read with two families' names. Each
// keeps its own prefix's series, maps its own renames onto the canonical
// names and lists the other's series as ignored; a missing metric is named
// as the family would expose it.
func TestParseForFamily(t *testing.T) {
	t.Parallel()
	const text = `# TYPE acme:tokens_out_total counter
acme:tokens_out_total 42
# TYPE acme:kv_used_ratio gauge
acme:kv_used_ratio 0.5
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} 7
# TYPE vllm:gpu_cache_usage_perc gauge
vllm:gpu_cache_usage_perc{engine="0",model_name="m"} 0.25
`
	tests := []struct {
		name          string
		fam           *serverfamily.Family
		gen, kv       float64
		found, ignore string
	}{
		{"vLLM", nil, 7, 0.25, "vllm:gpu_cache_usage_perc", "acme:tokens_out_total"},
		{"Acme", familytest.Acme(), 42, 0.5, "acme:kv_used_ratio", "vllm:generation_tokens_total"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseFor(tt.fam, strings.NewReader(text), "test", time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			if gen, err := s.Counter(GenerationTokensTotal); err != nil || gen != tt.gen {
				t.Errorf("generation_tokens_total = %v, %v; want %v", gen, err, tt.gen)
			}
			if kv, err := s.Gauge(KVCacheUsagePerc); err != nil || kv != tt.kv {
				t.Errorf("kv_cache_usage_perc = %v, %v; want %v", kv, err, tt.kv)
			}
			if m, _ := s.Metric(KVCacheUsagePerc); m == nil || m.Found != tt.found {
				t.Errorf("kv_cache_usage_perc found as %+v, want %s", m, tt.found)
			}
			ignored := false
			for _, ig := range s.Ignored {
				ignored = ignored || ig.Name == tt.ignore
			}
			if !ignored {
				t.Errorf("Ignored = %+v, want %s there", s.Ignored, tt.ignore)
			}
			_, err = s.Counter(NumPreemptionsTotal)
			if want := s.Family().Metrics.Prefix + NumPreemptionsTotal; err == nil || !strings.Contains(err.Error(), "metric "+want+" is not available") {
				t.Errorf("missing metric: %v, want it named %s", err, want)
			}
		})
	}
}
