package vllmsim

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

var updateExposition = flag.Bool("update-exposition", false, "rewrite testdata/vllm_exposition.golden from the simulator")

// expositionRequests are the completions the exposition tests send: their
// prompt and output lengths, in tokens (one per word).
var expositionRequests = []struct{ prompt, output int }{{3, 4}, {5, 2}, {8, 6}}

// serveRequests sends expositionRequests to m, one after the other.
func serveRequests(t *testing.T, m *sim) {
	t.Helper()
	for i, r := range expositionRequests {
		body := fmt.Sprintf(`{"model":"sim-model","prompt":%q,"max_tokens":%d,"ignore_eos":true}`, strings.TrimSpace(strings.Repeat("w ", r.prompt)), r.output)
		if code, out := m.post(t, "/v1/completions", body); code != http.StatusOK {
			t.Fatalf("request %d: status %d: %s", i, code, out)
		}
	}
}

// exposition is /metrics with every sample's value replaced by "V": the
// names, types, help, labels and buckets, not the figures.
func exposition(t *testing.T, m *sim) string {
	t.Helper()
	code, body := m.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: status %d: %s", code, body)
	}
	var out bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(string(body), "\n"), "\n") {
		if !strings.HasPrefix(line, "#") {
			if i := strings.LastIndexByte(line, ' '); i > 0 {
				line = line[:i] + " V"
			}
		}
		out.WriteString(line + "\n")
	}
	return out.String()
}

// TestVLLMExpositionUnchanged: without --sim-family (and with --sim-family
// vllm) /metrics has exactly the series, help, types, labels and buckets
// it had before the SGLang family came: the golden file was written by the
// simulator before that change.
func TestVLLMExpositionUnchanged(t *testing.T) {
	t.Parallel()
	golden := filepath.Join("testdata", "vllm_exposition.golden")
	for _, args := range [][]string{nil, {"--sim-family", "vllm"}} {
		m := startSim(t, args...)
		serveRequests(t, m)
		got := exposition(t, m)
		if *updateExposition && args == nil {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (write it with go test -run TestVLLMExpositionUnchanged -update-exposition)", err)
		}
		if got != string(want) {
			t.Errorf("args %q: /metrics differs from %s:\n%s", args, golden, lineDiff(string(want), got))
		}
	}
}

// lineDiff lists the lines only one of want and got has.
func lineDiff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// TestSGLangExposition: with --sim-family sglang /metrics serves SGLang's
// series (collector.py at metrics.SGLangSource) with their types, labels
// and buckets, its counters matching the requests served, the simulator's
// pace series beside them and no vLLM series.
func TestSGLangExposition(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--sim-family", "sglang")
	serveRequests(t, m)
	var prompt, output, gaps float64
	for _, r := range expositionRequests {
		prompt += float64(r.prompt)
		output += float64(r.output)
		gaps += float64(r.output - 1)
	}
	n := float64(len(expositionRequests))
	tokenizer := []string{"engine_type", "model_name"}
	scheduler := []string{"engine_type", "model_name", "moe_ep_rank", "pp_rank", "tp_rank"}
	ttft := []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	e2e := []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
	itl := []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1, 2, 4, 6, 8}
	queue := []float64{0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000}
	retractions := []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 75, 100}
	tests := []struct {
		name    string
		typ     dto.MetricType
		labels  []string
		buckets []float64 // histograms
		want    float64   // a counter's or gauge's value, a histogram's count; -1: any
	}{
		{"sglang:prompt_tokens_total", dto.MetricType_COUNTER, tokenizer, nil, prompt},
		{"sglang:generation_tokens_total", dto.MetricType_COUNTER, tokenizer, nil, output},
		{"sglang:cached_tokens_total", dto.MetricType_COUNTER, tokenizer, nil, 0},
		{"sglang:num_requests_total", dto.MetricType_COUNTER, tokenizer, nil, n},
		{"sglang:num_so_requests_total", dto.MetricType_COUNTER, tokenizer, nil, 0},
		{"sglang:num_aborted_requests_total", dto.MetricType_COUNTER, tokenizer, nil, 0},
		{"sglang:time_to_first_token_seconds", dto.MetricType_HISTOGRAM, tokenizer, ttft, n},
		{"sglang:inter_token_latency_seconds", dto.MetricType_HISTOGRAM, tokenizer, itl, gaps},
		{"sglang:e2e_request_latency_seconds", dto.MetricType_HISTOGRAM, tokenizer, e2e, n},
		{"sglang:num_retractions", dto.MetricType_HISTOGRAM, tokenizer, retractions, n},
		{"sglang:num_running_reqs", dto.MetricType_GAUGE, scheduler, nil, 0},
		{"sglang:num_queue_reqs", dto.MetricType_GAUGE, scheduler, nil, 0},
		{"sglang:token_usage", dto.MetricType_GAUGE, scheduler, nil, 0},
		{"sglang:cache_hit_rate", dto.MetricType_GAUGE, scheduler, nil, -1},
		{"sglang:max_total_num_tokens", dto.MetricType_GAUGE, scheduler, nil, float64(m.s.info.NumGPUBlocks * m.s.info.Config.BlockSize)},
		{"sglang:num_retracted_requests_total", dto.MetricType_COUNTER, scheduler, nil, 0},
		{"sglang:spec_accept_length", dto.MetricType_GAUGE, scheduler, nil, 0},
		{"sglang:spec_accept_rate", dto.MetricType_GAUGE, scheduler, nil, 0},
		{"sglang:queue_time_seconds", dto.MetricType_HISTOGRAM, scheduler, queue, n},
		{"vllmperf_sim_real_time_modelled_seconds_total", dto.MetricType_COUNTER, scheduler, nil, -1},
		{"vllmperf_sim_real_time_lost_seconds_total", dto.MetricType_COUNTER, scheduler, nil, -1},
		{"vllmperf_sim_behind_real_time_ratio", dto.MetricType_GAUGE, scheduler, nil, -1},
	}
	mfs := m.scrape(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mf := mfs[tt.name]
			if mf == nil {
				t.Fatalf("/metrics lacks %s", tt.name)
			}
			if mf.GetType() != tt.typ || len(mf.GetMetric()) != 1 {
				t.Fatalf("%s: type %v with %d series, want %v with 1", tt.name, mf.GetType(), len(mf.GetMetric()), tt.typ)
			}
			s := mf.GetMetric()[0]
			if got := labelNames(s); strings.Join(got, ",") != strings.Join(tt.labels, ",") {
				t.Errorf("labels %v, want %v", got, tt.labels)
			}
			if !hasLabels(s, "model_name", "sim-model", "engine_type", "unified") {
				t.Errorf("labels %v, want model_name sim-model, engine_type unified", s.GetLabel())
			}
			got := value(s)
			if h := s.GetHistogram(); h != nil {
				checkBuckets(t, h, tt.buckets)
			}
			if tt.want >= 0 && got != tt.want {
				t.Errorf("value %v, want %v", got, tt.want)
			}
		})
	}
	for name := range mfs {
		if !strings.HasPrefix(name, "sglang:") && !strings.HasPrefix(name, "vllmperf_sim_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("sglang family serves %s", name)
		}
	}
}

// TestSimFamilyRejected: an unknown --sim-family fails naming the valid ones.
func TestSimFamilyRejected(t *testing.T) {
	t.Parallel()
	_, err := New([]string{"sim-model", "--sim-family", "tgi"}, nil)
	want := "argument --sim-family: invalid choice: 'tgi' (choose from 'vllm', 'sglang')"
	if err == nil || err.Error() != want {
		t.Fatalf("New(--sim-family tgi) = %v, want %q", err, want)
	}
}

func labelNames(m *dto.Metric) []string {
	var out []string
	for _, lp := range m.GetLabel() {
		out = append(out, lp.GetName())
	}
	return out
}

// value is a counter's or gauge's value, a histogram's count.
func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}

func checkBuckets(t *testing.T, h *dto.Histogram, want []float64) {
	t.Helper()
	var got []float64
	for _, b := range h.GetBucket() {
		if !math.IsInf(b.GetUpperBound(), 1) { // the parser adds +Inf
			got = append(got, b.GetUpperBound())
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("buckets %v, want %v", got, want)
	}
}
