package scrape

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDiffRecordedRun(t *testing.T) {
	t.Parallel()
	before, after := fixturePair(t, "vllm-sim-v1-before.prom", "vllm-sim-v1-after.prom")
	d, err := Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	run := float64(recAfter - recBefore) // requests of the second run, warm-up included
	for _, tc := range []struct {
		name string
		want float64
	}{
		{GenerationTokensTotal, run * 64},
		{PromptTokensTotal, run * recPromptTokens},
		{RequestSuccessTotal, run},
		{NumPreemptionsTotal, 0},
	} {
		if got, err := d.Counter(tc.name); err != nil || got != tc.want {
			t.Errorf("Δ%s = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	by, err := d.CounterBy(RequestSuccessTotal, "finished_reason")
	if want := map[string]float64{"abort": 0, "error": 0, "length": run, "stop": 0}; err != nil || !reflect.DeepEqual(by, want) {
		t.Errorf("Δrequest_success_total by finished_reason = %v, %v; want %v", by, err, want)
	}

	h, err := d.Histogram(TimeToFirstTokenSeconds)
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := before.Histogram(TimeToFirstTokenSeconds)
	ha, _ := after.Histogram(TimeToFirstTokenSeconds)
	if h.Count != run {
		t.Errorf("ΔTTFT count = %v, want %v (one per request)", h.Count, run)
	}
	for i, b := range h.Buckets {
		if want := ha.Buckets[i].Count - hb.Buckets[i].Count; b.Count != want || b.UpperBound != ha.Buckets[i].UpperBound {
			t.Errorf("ΔTTFT bucket %d = %+v, want le=%v count %v", i, b, ha.Buckets[i].UpperBound, want)
		}
	}
	mean, err := h.Mean()
	if want := (ha.Sum - hb.Sum) / (ha.Count - hb.Count); err != nil || mean != want {
		t.Errorf("ΔTTFT mean = %v, %v; want Δsum/Δcount = %v", mean, err, want)
	}
	p50, err1 := h.Quantile(0.5)
	p99, err2 := h.Quantile(0.99)
	if err1 != nil || err2 != nil || p50 <= 0 || p99 < p50 || p99 > 2560 {
		t.Errorf("ΔTTFT p50 %v (%v), p99 %v (%v); want 0 < p50 ≤ p99 ≤ 2560", p50, err1, p99, err2)
	}

	// Gauges have no delta; the error says where to read them.
	if _, err := d.Counter(NumRequestsRunning); !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), "Delta.After") {
		t.Errorf("Δnum_requests_running error = %v, want not available, read from Delta.After", err)
	}
	// Missing metrics are named.
	if _, err := d.Counter(SpecDecodeDraftsTotal); !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), "vllm:spec_decode_num_drafts_total") {
		t.Errorf("Δspec_decode_num_drafts_total error = %v, want not available by name", err)
	}
	if _, err := d.CounterBy(GenerationTokensTotal, "finished_reason"); !errors.Is(err, ErrNotAvailable) {
		t.Errorf("CounterBy on a label the counter lacks: error = %v, want not available", err)
	}
}

func TestDiffAcrossOldNames(t *testing.T) {
	t.Parallel()
	d, err := Diff(fixturePair(t, "vllm-sim-v0.9-before.prom", "vllm-sim-v0.9-after.prom"))
	if err != nil {
		t.Fatal(err)
	}
	hits, err1 := d.Counter(PrefixCacheHitsTotal)
	queries, err2 := d.Counter(PrefixCacheQueriesTotal)
	if err1 != nil || err2 != nil || queries != float64(recAfter-recBefore)*recPromptTokens || hits <= 0 || hits > queries {
		t.Errorf("Δprefix cache hits %v (%v), queries %v (%v); want 0 < hits ≤ queries = every prompt token", hits, err1, queries, err2)
	}
	if h, err := d.Histogram(InterTokenLatencySeconds); err != nil || h.Count <= 0 {
		t.Errorf("Δinter_token_latency_seconds (from time_per_output_token_seconds) = %+v, %v", h, err)
	}
}

func TestDiffDetectsRecordedRestart(t *testing.T) {
	t.Parallel()
	d, err := Diff(fixturePair(t, "vllm-sim-restart-before.prom", "vllm-sim-restart-after.prom"))
	var re *ResetError
	if d != nil || !errors.As(err, &re) {
		t.Fatalf("Diff across a restart = %v, %v; want no delta and a *ResetError", d, err)
	}
	found := false
	for _, r := range re.Resets {
		if r.Metric == "vllm:generation_tokens_total" {
			found = r.Before == 112 && r.After == 64 && r.Series == `{engine="0",model_name="Qwen/Qwen3-0.6B"}`
		}
	}
	if !found {
		t.Errorf("resets %v: want vllm:generation_tokens_total going from 112 to 64", re.Resets)
	}
	if !strings.Contains(err.Error(), "did the server restart?") {
		t.Errorf("error = %q, want it to suggest a restart", err)
	}
}

func TestDiffResets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		before, after string
		want          Reset
	}{
		// a counter going down
		{"counter down", "vllm:prompt_tokens_total{engine=\"0\"} 10\n", "vllm:prompt_tokens_total{engine=\"0\"} 4\n",
			Reset{Metric: "vllm:prompt_tokens_total", Series: `{engine="0"}`, Before: 10, After: 4, Reason: "went down"}},
		// a histogram whose count goes down
		{"histogram count down",
			"# TYPE vllm:h histogram\nvllm:h_bucket{le=\"1\"} 3\nvllm:h_bucket{le=\"+Inf\"} 5\nvllm:h_count 5\nvllm:h_sum 1\n",
			"# TYPE vllm:h histogram\nvllm:h_bucket{le=\"1\"} 1\nvllm:h_bucket{le=\"+Inf\"} 2\nvllm:h_count 2\nvllm:h_sum 1\n",
			Reset{Metric: "vllm:h", Series: "{}", Before: 5, After: 2, Reason: "histogram count went down"}},
		// a bucket going down while the count rises
		{"bucket down",
			"# TYPE vllm:h histogram\nvllm:h_bucket{le=\"1\"} 3\nvllm:h_bucket{le=\"+Inf\"} 5\nvllm:h_count 5\nvllm:h_sum 1\n",
			"# TYPE vllm:h histogram\nvllm:h_bucket{le=\"1\"} 2\nvllm:h_bucket{le=\"+Inf\"} 6\nvllm:h_count 6\nvllm:h_sum 1\n",
			Reset{Metric: "vllm:h", Series: "{}", Before: 5, After: 6, Reason: `bucket le="1" went down`}},
		// bucket bounds that change
		{"bounds changed",
			"# TYPE vllm:h histogram\nvllm:h_bucket{le=\"1\"} 3\nvllm:h_bucket{le=\"+Inf\"} 5\nvllm:h_count 5\nvllm:h_sum 1\n",
			"# TYPE vllm:h histogram\nvllm:h_bucket{le=\"2\"} 3\nvllm:h_bucket{le=\"+Inf\"} 6\nvllm:h_count 6\nvllm:h_sum 1\n",
			Reset{Metric: "vllm:h", Series: "{}", Before: 5, After: 6, Reason: "changed its bucket bounds"}},
		// one engine's series vanishing
		{"series gone", "vllm:prompt_tokens_total{engine=\"0\"} 1\nvllm:prompt_tokens_total{engine=\"1\"} 2\n", "vllm:prompt_tokens_total{engine=\"0\"} 3\n",
			Reset{Metric: "vllm:prompt_tokens_total", Series: `{engine="1"}`, Before: 2, Reason: "disappeared from the exposition"}},
		// the whole counter vanishing
		{"metric gone", "vllm:prompt_tokens_total 1\nvllm:num_requests_running 0\n", "vllm:num_requests_running 0\n",
			Reset{Metric: "vllm:prompt_tokens_total", Series: "{}", Before: 1, Reason: "disappeared from the exposition"}},
		// a restart after which the counter already grew past its old
		// value: only the process start time tells
		{"process restarted", "process_start_time_seconds 1700000000\nvllm:prompt_tokens_total 10\n", "process_start_time_seconds 1700000100\nvllm:prompt_tokens_total 40\n",
			Reset{Metric: "process_start_time_seconds", Before: 1700000000, After: 1700000100, Reason: "changed: the server restarted between the two scrapes"}},
		// the same told by Python's _created timestamps
		{"created anew", "# TYPE vllm:prompt_tokens counter\nvllm:prompt_tokens_total 10\nvllm:prompt_tokens_created 1700000000\n", "# TYPE vllm:prompt_tokens counter\nvllm:prompt_tokens_total 40\nvllm:prompt_tokens_created 1700000100\n",
			Reset{Metric: "vllm:prompt_tokens_total", Before: 1700000000, After: 1700000100, Reason: "was created anew (its _created timestamp moved): the server restarted"}},
		// a counter that became a gauge
		{"kind changed", "# TYPE vllm:x_total counter\nvllm:x_total 1\n", "# TYPE vllm:x_total gauge\nvllm:x_total 2\n",
			Reset{Metric: "vllm:x_total", Reason: "changed from a counter to a gauge"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			t0 := time.Unix(1000, 0)
			d, err := Diff(mustParse(t, tc.before, t0), mustParse(t, tc.after, t0.Add(time.Second)))
			var re *ResetError
			if d != nil || !errors.As(err, &re) {
				t.Fatalf("Diff = %v, %v; want a *ResetError and no delta", d, err)
			}
			if got, want := re.Resets, []Reset{tc.want}; !reflect.DeepEqual(got, want) {
				t.Errorf("resets = %+v\nwant %+v", got, want)
			}
		})
	}
}

func TestDiffWithoutReset(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	before := mustParse(t, `vllm:generation_tokens_total{engine="0"} 100
vllm:num_requests_running{engine="0"} 8
vllm:request_success_total{engine="0",finished_reason="length"} 4
`, t0)
	after := mustParse(t, `vllm:generation_tokens_total{engine="0"} 300
vllm:num_requests_running{engine="0"} 0
vllm:request_success_total{engine="0",finished_reason="length"} 6
vllm:request_success_total{engine="0",finished_reason="stop"} 3
`, t0.Add(4*time.Second))
	// A gauge going down is no reset; a series first seen later counts from 0.
	d, err := Diff(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.Counter(RequestSuccessTotal); err != nil || got != 2+3 {
		t.Errorf("Δrequest_success_total = %v, %v; want 5", got, err)
	}
	if got, err := d.Rate(GenerationTokensTotal); err != nil || got != 50 {
		t.Errorf("generation rate = %v, %v; want 200 tokens / 4 s = 50", got, err)
	}
	if got := d.Elapsed(); got != 4*time.Second {
		t.Errorf("Elapsed = %v, want 4s", got)
	}
	if _, err := Diff(after, before); err == nil || !strings.Contains(err.Error(), "taken before") {
		t.Errorf("Diff with the snapshots swapped: error = %v, want one about their order", err)
	}
}
