package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestSGLangSeries: what the engine records lands in SGLang's series as
// SGLang's collectors would count it.
func TestSGLangSeries(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, err := New(Setup{Family: SGLang, ModelName: "m", MaxModelLen: 4096, SpecTokens: 3, Cache: Cache{BlockSize: 16, NumGPUBlocks: 100}}, reg)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Scheduled(0.5, true, 10, 4)
	s.Scheduled(0.1, true, 10, 6)
	s.Drafted(3, 1)
	s.Drafted(3, 3)
	s.TokenGap(0.3, 3)
	s.FinishedRequest("abort", Finished{Arrival: t0, End: t0.Add(time.Second), Preemptions: 2, Guided: true})
	s.FinishedRequest("stop", Finished{Arrival: t0, End: t0.Add(2 * time.Second)})
	s.Gauges(2, 1, 0.25)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*dto.Metric{}
	for _, mf := range mfs {
		got[mf.GetName()] = mf.GetMetric()[0]
	}
	tests := []struct {
		name string
		want float64 // a counter's or gauge's value, a histogram's count
		sum  float64 // a histogram's sum
	}{
		{"sglang:num_requests_total", 2, 0},
		{"sglang:num_aborted_requests_total", 1, 0},
		{"sglang:num_so_requests_total", 1, 0},
		{"sglang:num_retractions", 2, 2},
		{"sglang:e2e_request_latency_seconds", 1, 2},
		{"sglang:inter_token_latency_seconds", 3, 0.3},
		{"sglang:queue_time_seconds", 2, 0.6},
		{"sglang:cache_hit_rate", 0.5, 0},
		{"sglang:spec_accept_length", 3, 0},  // (4 accepted + 2 forwards) / 2
		{"sglang:spec_accept_rate", 0.75, 0}, // 6 / (2 × 4 verified)
		{"sglang:num_running_reqs", 2, 0},
		{"sglang:num_queue_reqs", 1, 0},
		{"sglang:token_usage", 0.25, 0},
		{"sglang:max_total_num_tokens", 1600, 0},
	}
	for _, tt := range tests {
		m := got[tt.name]
		if m == nil {
			t.Errorf("%s not served", tt.name)
			continue
		}
		var v, sum float64
		switch {
		case m.GetCounter() != nil:
			v = m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			v = m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			v, sum = float64(m.GetHistogram().GetSampleCount()), m.GetHistogram().GetSampleSum()
		}
		if v != tt.want || (m.GetHistogram() != nil && !near(sum, tt.sum)) {
			t.Errorf("%s = %v (sum %v), want %v (sum %v)", tt.name, v, sum, tt.want, tt.sum)
		}
	}
	for name := range got {
		if !strings.HasPrefix(name, "sglang:") && !strings.HasPrefix(name, "vllmperf_sim_") {
			t.Errorf("the SGLang family serves %s", name)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestParseFamily: the families, and the error naming them.
func TestParseFamily(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Family
		err  string
	}{
		{"", VLLM, ""},
		{"vllm", VLLM, ""},
		{"sglang", SGLang, ""},
		{"SGLang", "", "invalid choice: 'SGLang' (choose from 'vllm', 'sglang')"},
		{"tgi", "", "invalid choice: 'tgi' (choose from 'vllm', 'sglang')"},
	} {
		got, err := ParseFamily(tt.in)
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("ParseFamily(%q) = %v, want error %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseFamily(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
