package serverfamily_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// TestRegistry: the shipped families are registered under their keys,
// usable, and without conflicts; ByName takes any case and lists the
// valid names on an unknown one.
func TestRegistry(t *testing.T) {
	t.Parallel()
	if c := serverfamily.Conflicts(); len(c) > 0 {
		t.Errorf("Register conflicts: %q", c)
	}
	for _, key := range []string{"vllm", "sglang"} {
		if !slices.Contains(serverfamily.Keys(), key) {
			t.Errorf("Keys() = %q, want %s among them", serverfamily.Keys(), key)
		}
	}
	for _, f := range serverfamily.All() {
		if err := f.Check(); err != nil {
			t.Errorf("%s: %v", f.Name, err)
		}
		if f.Image == "" {
			t.Errorf("%s: no Image for the container backend", f.Name)
		}
	}
	tests := []struct {
		in   string
		want *serverfamily.Family
	}{
		{"vllm", serverfamily.VLLM},
		{" SGLang ", serverfamily.SGLang},
	}
	for _, tt := range tests {
		if got, err := serverfamily.ByName(tt.in); err != nil || got != tt.want {
			t.Errorf("ByName(%q) = %v, %v", tt.in, got, err)
		}
	}
	_, err := serverfamily.ByName("tgi")
	if err == nil || !strings.Contains(err.Error(), `server family "tgi" is unknown: use one of `) || !strings.Contains(err.Error(), "sglang") || !strings.Contains(err.Error(), "vllm") {
		t.Errorf("ByName(tgi) = %v, want an error listing the families", err)
	}
}

// TestFromEnv: VLLMPERF_FAMILY picks the family; unset is vLLM; an unknown
// name is an error naming the variable.
func TestFromEnv(t *testing.T) {
	tests := []struct {
		env     string
		want    *serverfamily.Family
		wantErr string
	}{
		{"", serverfamily.VLLM, ""},
		{"sglang", serverfamily.SGLang, ""},
		{"tgi", serverfamily.VLLM, envvar.Family.Name + `: server family "tgi" is unknown`},
	}
	for _, tt := range tests {
		t.Setenv(envvar.Family.Name, tt.env)
		got, err := serverfamily.Selected()
		if got != tt.want || (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%s=%q: Selected() = %v, %v; want %v, %q", envvar.Family.Name, tt.env, got.Name, err, tt.want.Name, tt.wantErr)
		}
	}
}

// TestDetect: the family is read off an exposition's names; sglang:
// names pick SGLang, vllm: names vLLM, and none of either nothing.
func TestDetect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want *serverfamily.Family
	}{
		{"sglang", "# HELP sglang:num_running_reqs x\n# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name=\"m\"} 1\nsglang:token_usage 0.1\nprocess_cpu_seconds_total 3\n", serverfamily.SGLang},
		{"vllm", "vllm:num_requests_running{engine=\"0\"} 2\nvllm:kv_cache_usage_perc 0.5\n", serverfamily.VLLM},
		{"none", "# only comments\nprocess_cpu_seconds_total 3\n", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		got, ok := serverfamily.DetectText([]byte(tt.text))
		if got != tt.want || ok != (tt.want != nil) {
			t.Errorf("%s: DetectText = %v, %v; want %v", tt.name, got, ok, tt.want)
		}
	}
}

// TestSGLangNames: SGLang's names (collector.py) map onto the canonical
// ones where the meaning is the same, its own series stay its own, and
// the canonical metrics it lacks are listed.
func TestSGLangNames(t *testing.T) {
	t.Parallel()
	s := serverfamily.SGLang
	tests := []struct{ in, want string }{
		{"sglang:num_running_reqs", "num_requests_running"},
		{"sglang:num_queue_reqs", "num_requests_waiting"},
		{"sglang:token_usage", "kv_cache_usage_perc"},
		{"sglang:prompt_tokens_total", "prompt_tokens_total"},
		{"sglang:generation_tokens_total", "generation_tokens_total"},
		{"sglang:cached_tokens_total", "prompt_tokens_cached_total"},
		{"sglang:num_requests_total", "request_success_total"},
		{"sglang:time_to_first_token_seconds", "time_to_first_token_seconds"},
		{"sglang:inter_token_latency_seconds", "inter_token_latency_seconds"},
		{"sglang:e2e_request_latency_seconds", "e2e_request_latency_seconds"},
		{"sglang:queue_time_seconds", "request_queue_time_seconds"},
		{"sglang:cache_hit_rate", "cache_hit_rate"}, // its own: no canonical counterpart
	}
	for _, tt := range tests {
		if got := s.Canonical(tt.in); got != tt.want {
			t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if s.ExposesAll() || !slices.Contains(s.Metrics.Missing, "prefix_cache_hits_total") {
		t.Errorf("SGLang Missing = %q, want prefix_cache_hits_total among them", s.Metrics.Missing)
	}
	l, err := s.Launch("")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(append(slices.Clone(l.Entrypoint), l.Command("m", 30000, []string{"--tp-size", "2"})...), " ")
	if want := "python3 -m sglang.launch_server --model-path m --host 0.0.0.0 --port 30000 --enable-metrics --tp-size 2"; got != want {
		t.Errorf("launch = %q, want %q", got, want)
	}
	if s.Flags.BatchCap != "max-running-requests" || !s.IsKnownFlag("mem-fraction-static") || s.IsKnownFlag("max-num-seqs") {
		t.Errorf("SGLang flags: batch cap %q", s.Flags.BatchCap)
	}
}

// TestKVCacheGiB: vLLM's start-up line gives the KV cache's size; a family
// that logs none gives nothing.
func TestKVCacheGiB(t *testing.T) {
	t.Parallel()
	lines := []string{"INFO loading", "INFO [gpu_worker.py:276] Available KV cache memory: 12.5 GiB", "INFO done"}
	if gib, ok := serverfamily.VLLM.KVCacheGiB(lines); !ok || gib != 12.5 {
		t.Errorf("vLLM KVCacheGiB = %v, %v; want 12.5", gib, ok)
	}
	if _, ok := serverfamily.VLLM.KVCacheGiB([]string{"Available KV cache memory: 0 GiB"}); ok {
		t.Errorf("a zero size was taken")
	}
	if _, ok := serverfamily.SGLang.KVCacheGiB(lines); ok {
		t.Errorf("SGLang read vLLM's line")
	}
}
