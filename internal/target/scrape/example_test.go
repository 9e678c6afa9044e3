package scrape_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/scrape"
)

// A run's own share of the server's counters and its server-side TTFT
// percentiles, from snapshots taken before and after it.
func ExampleDiff() {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	before, _ := scrape.Parse(strings.NewReader(`
vllm:generation_tokens_total{engine="0",model_name="m"} 1000
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="0.1"} 10
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="0.5"} 10
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="+Inf"} 10
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 0.4
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 10
`), "before", t0)
	after, _ := scrape.Parse(strings.NewReader(`
vllm:generation_tokens_total{engine="0",model_name="m"} 1640
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="0.1"} 14
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="0.5"} 20
vllm:time_to_first_token_seconds_bucket{engine="0",model_name="m",le="+Inf"} 20
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} 2.4
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} 20
`), "after", t0.Add(8*time.Second))

	d, err := scrape.Diff(before, after)
	if err != nil {
		fmt.Println(err)
		return
	}
	tokens, _ := d.Counter(scrape.GenerationTokensTotal)
	rate, _ := d.Rate(scrape.GenerationTokensTotal)
	ttft, _ := d.Histogram(scrape.TimeToFirstTokenSeconds)
	mean, _ := ttft.Mean()
	p50, _ := ttft.Quantile(0.5)
	fmt.Printf("%.0f tokens, %.0f tok/s; TTFT of %.0f requests: mean %.2f s, p50 %.2f s\n", tokens, rate, ttft.Count, mean, p50)
	_, err = d.Counter(scrape.NumPreemptionsTotal)
	fmt.Println(errors.Is(err, scrape.ErrNotAvailable))
	// Output:
	// 640 tokens, 80 tok/s; TTFT of 10 requests: mean 0.20 s, p50 0.17 s
	// true
}

// A vLLM 0.9 name is read under its V1 name.
func ExampleSnapshot_Gauge() {
	s, _ := scrape.Parse(strings.NewReader("vllm:gpu_cache_usage_perc{engine=\"0\"} 0.42\n"), "old-server", time.Now())
	v, _ := s.Gauge(scrape.KVCacheUsagePerc)
	fmt.Println(v, s.Renamed[0].Found)
	// Output: 0.42 vllm:gpu_cache_usage_perc
}
