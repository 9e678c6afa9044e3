package engine

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// Acceptance (8): counters reconcile exactly with what clients received.
func TestCountersReconcile(t *testing.T) {
	cfg := defaultCfg()
	cfg.EOSProbability = 0.05
	cfg.SpeculativeConfig = `{"method":"ngram","num_speculative_tokens":3}`
	s := newSim(t, cfg, nil)
	var aborted []*seq
	closedLoop(s, 6, 5, func(c, k int) Request {
		return Request{PromptTokens: prompt(80+c*13, c*31+k), MaxTokens: 60, MinTokens: 10 * (k % 2), IgnoreEOS: k == 4}
	})
	// Abort two requests mid-flight in a second run on the same engine.
	for i := 0; i < 2; i++ {
		s.submit(simReq{at: s.clk.now.Sub(s.t0), class: "abort", req: Request{PromptTokens: prompt(90, 777+i), MaxTokens: 200, MinTokens: 150}})
	}
	s.e.mu.Lock()
	for _, q := range s.e.waiting {
		aborted = append(aborted, q)
	}
	s.e.mu.Unlock()
	for k := 0; k < 5; k++ { // a few steps so they have tokens
		s.e.mu.Lock()
		p := s.e.schedule()
		s.clk.now = s.clk.now.Add(s.e.stepTime(p))
		s.e.apply(p, s.clk.now)
		s.e.mu.Unlock()
		s.sm.deliver()
	}
	for _, q := range aborted {
		s.e.abort(q)
	}
	s.sm.deliver()
	var gen, promptToks, cached int
	reasons := map[string]int{}
	for _, r := range s.recs {
		gen += r.tokens
		if r.tokens > 0 {
			promptToks += r.promptLen
		}
		cached += r.cached
		reasons[r.reason]++
	}
	m := s.e.m
	checks := []struct {
		name      string
		got, want float64
	}{
		{"generation_tokens", val(m.GenerationTokens), float64(gen)},
		{"prompt_tokens", val(m.PromptTokens), float64(promptToks)},
		{"prompt_tokens_cached", val(m.PromptTokensCached), float64(cached)},
		{"request_success{stop}", val(m.Success["stop"]), float64(reasons["stop"])},
		{"request_success{length}", val(m.Success["length"]), float64(reasons["length"])},
		{"request_success{abort}", val(m.Success["abort"]), float64(reasons["abort"])},
		{"request_success{error}", val(m.Success["error"]), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, clients saw %v", c.name, c.got, c.want)
		}
	}
	if reasons["stop"] == 0 || reasons["length"] == 0 || reasons["abort"] != 2 {
		t.Errorf("finish reasons %v: want some stop, some length, 2 abort", reasons)
	}
	if val(m.Running) != 0 || val(m.Waiting) != 0 {
		t.Errorf("gauges after the run: running %v waiting %v", val(m.Running), val(m.Waiting))
	}
}

// MinTokens holds EOS back; IgnoreEOS generates exactly MaxTokens.
func TestStopConditions(t *testing.T) {
	cfg := defaultCfg()
	cfg.EOSProbability = 0.5
	s := newSim(t, cfg, nil)
	var arr []simReq
	for i := 0; i < 20; i++ {
		arr = append(arr, simReq{class: "min", req: Request{PromptTokens: prompt(20, i), MaxTokens: 30, MinTokens: 12}})
		arr = append(arr, simReq{class: "ignore", req: Request{PromptTokens: prompt(20, 100+i), MaxTokens: 30, IgnoreEOS: true}})
	}
	s.run(arr, nil)
	for _, r := range s.recs {
		switch r.class {
		case "min":
			if r.tokens < 13 && r.reason == "stop" || r.tokens > 30 {
				t.Errorf("min_tokens 12: %d tokens, reason %s", r.tokens, r.reason)
			}
		case "ignore":
			if r.tokens != 30 || r.reason != "length" {
				t.Errorf("ignore_eos: %d tokens, reason %s; want 30 length", r.tokens, r.reason)
			}
		}
	}
}

func gatherText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, mf := range mfs {
		if err := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain)).Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// Acceptance (9): names, labels and buckets of the exposition, current and 0.9.
func TestMetricsExposition(t *testing.T) {
	tests := []struct {
		name    string
		version MetricsVersion
		want    []string
		absent  []string
	}{
		// current names
		{"current", MetricsCurrent, []string{
			`vllm:prompt_tokens_total{engine="0",model_name="my-model"} `,
			`vllm:generation_tokens_total{engine="0",model_name="my-model"} `,
			`vllm:prompt_tokens_cached_total{`,
			`vllm:request_success_total{engine="0",finished_reason="length",model_name="my-model"} 1`,
			`vllm:request_success_total{engine="0",finished_reason="abort",model_name="my-model"} 0`,
			`vllm:prefix_cache_queries_total{`, `vllm:prefix_cache_hits_total{`, `vllm:num_preemptions_total{`,
			`vllm:num_requests_running{engine="0",model_name="my-model"} 0`,
			`vllm:num_requests_waiting{engine="0",model_name="my-model"} 0`,
			`vllm:num_requests_waiting_by_reason{engine="0",model_name="my-model",reason="capacity"} 0`,
			`vllm:num_requests_waiting_by_reason{engine="0",model_name="my-model",reason="deferred"} 0`,
			`vllm:kv_cache_usage_perc{`,
			`block_size="16"`, `cache_dtype="auto"`, `enable_prefix_caching="True"`, `gpu_memory_utilization="0.9"`, `num_cpu_blocks="0"`, `kv_cache_size_tokens="`,
			`vllm:time_to_first_token_seconds_bucket{engine="0",model_name="my-model",le="0.001"} `,
			`vllm:time_to_first_token_seconds_bucket{engine="0",model_name="my-model",le="2560"} `,
			`vllm:inter_token_latency_seconds_bucket{engine="0",model_name="my-model",le="0.01"} `,
			`vllm:request_time_per_output_token_seconds_bucket{engine="0",model_name="my-model",le="80"} `,
			`vllm:e2e_request_latency_seconds_bucket{engine="0",model_name="my-model",le="7680"} `,
			`vllm:request_queue_time_seconds_count{`, `vllm:request_inference_time_seconds_count{`,
			`vllm:request_prefill_time_seconds_count{`, `vllm:request_decode_time_seconds_count{`,
			`vllm:iteration_tokens_total_bucket{engine="0",model_name="my-model",le="16384"} `,
			`vllm:request_prompt_tokens_bucket{engine="0",model_name="my-model",le="2000"} `,
			`vllm:request_generation_tokens_bucket{engine="0",model_name="my-model",le="20000"} `,
			`vllm:request_params_max_tokens_bucket{engine="0",model_name="my-model",le="1"} `,
		}, []string{"gpu_cache_usage_perc", "gpu_prefix_cache", "vllm:time_per_output_token_seconds", "spec_decode", `le="50000"`}},
		// vLLM 0.9 names where they differ
		{"0.9", MetricsV09, []string{
			`vllm:gpu_cache_usage_perc{`, `vllm:gpu_prefix_cache_queries_total{`, `vllm:gpu_prefix_cache_hits_total{`,
			`vllm:time_per_output_token_seconds_bucket{`, `vllm:prompt_tokens_total{`,
		}, []string{"vllm:kv_cache_usage_perc", "vllm:prefix_cache_queries", "inter_token_latency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			cfg := defaultCfg()
			cfg.ServedModelNames = []string{"my-model", "alias"}
			cfg.MaxModelLen = 40960
			cfg.MetricsVersion = tt.version
			s := newSim(t, cfg, reg)
			s.run([]simReq{{req: Request{PromptTokens: prompt(30, 1), MaxTokens: 5, IgnoreEOS: true}}}, nil)
			text := gatherText(t, reg)
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("exposition lacks %q", w)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(text, a) {
					t.Errorf("exposition has %q", a)
				}
			}
		})
	}
	// The OpenMetrics encoder must not double the suffix.
	{
		reg := prometheus.NewRegistry()
		newSim(t, defaultCfg(), reg)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeOpenMetrics))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				t.Fatal(err)
			}
		}
		if text := b.String(); strings.Contains(text, "_total_total") || !strings.Contains(text, "vllm:prompt_tokens_total{") {
			t.Errorf("OpenMetrics exposition has doubled or missing _total:\n%.2000s", text)
		}
	}
	// Spec decode counters appear only with --speculative-config.
	reg := prometheus.NewRegistry()
	cfg := defaultCfg()
	cfg.SpeculativeConfig = `{"method":"ngram","num_speculative_tokens":2}`
	s := newSim(t, cfg, reg)
	s.run([]simReq{{req: Request{PromptTokens: prompt(30, 1), MaxTokens: 20, IgnoreEOS: true}}}, nil)
	text := gatherText(t, reg)
	for _, w := range []string{"vllm:spec_decode_num_drafts_total{", "vllm:spec_decode_num_draft_tokens_total{", "vllm:spec_decode_num_accepted_tokens_total{", `vllm:spec_decode_num_accepted_tokens_per_pos_total{engine="0",model_name="Qwen/Qwen3-0.6B",position="1"}`} {
		if !strings.Contains(text, w) {
			t.Errorf("exposition lacks %q", w)
		}
	}
}

// Bad configuration is an error that names the problem and the fix.
func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		// an unknown GPU preset lists the presets
		{"gpu", Config{GPU: "tpu-v9"}, "argument --sim-gpu: unknown GPU preset 'tpu-v9' (choose from 'a10', 'a100', 'h100', 'h200', 'l4', 'l40s', 'rtx4090', 'rtx4090-seed')"},
		// metrics version
		{"metrics", Config{MetricsVersion: "0.7"}, "argument --sim-metrics-version: invalid choice: '0.7' (choose from 'current', '0.9')"},
		// spec decode JSON
		{"spec-json", Config{SpeculativeConfig: "{method:ngram"}, "argument --speculative-config: invalid JSON"},
		// fixed timing needs both knobs
		{"fixed", Config{FixedTTFT: time.Millisecond}, "go together"},
		// chunked prefill off needs a big enough step
		{"unchunked", Config{EnableChunkedPrefill: false, MaxModelLen: 8192, MaxNumBatchedTokens: 2048}, "max_num_batched_tokens (2048) is smaller than max_model_len (8192)"},
		// the KV cache must hold one max_model_len sequence
		{"kv-too-small", Config{EnableChunkedPrefill: true, GPUMemoryUtilization: 0.11}, "larger than the maximum number of tokens that can be stored in KV cache"},
		// no memory left for KV at all
		{"no-memory", Config{EnableChunkedPrefill: true, Model: "meta-llama/Llama-3.1-70B-Instruct", GPU: "a10"}, "no available memory for the cache blocks"},
		// TP must divide the heads
		{"tp", Config{EnableChunkedPrefill: true, TensorParallelSize: 3}, "must be divisible by tensor parallel size (3)"},
		// over the model's context
		{"max-model-len", Config{EnableChunkedPrefill: true, MaxModelLen: 100000}, "greater than the derived max_model_len"},
		// block size choices
		{"block", Config{EnableChunkedPrefill: true, BlockSize: 24}, "argument --block-size: invalid choice: '24' (choose from '1', '8', '16', '32', '64', '128')"},
		// utilization range
		{"util", Config{EnableChunkedPrefill: true, GPUMemoryUtilization: 1.5}, "argument --gpu-memory-utilization: 1.5 is out of range: want a number > 0 and <= 1"},
		// dtype names: vLLM's choices only
		{"dtype", Config{EnableChunkedPrefill: true, Dtype: "int3"}, "argument --dtype: invalid choice: 'int3'"},
		// bf16 is not one of vLLM's --dtype spellings
		{"dtype bf16", Config{EnableChunkedPrefill: true, Dtype: "bf16"}, "argument --dtype: invalid choice: 'bf16'"},
		{"kv-dtype", Config{EnableChunkedPrefill: true, KVCacheDtype: "fp4"}, "argument --kv-cache-dtype: invalid choice: 'fp4'"},
		// batch smaller than seqs
		{"budget", Config{EnableChunkedPrefill: true, MaxNumSeqs: 512, MaxNumBatchedTokens: 256}, "must be greater than or equal to max_num_seqs"},
		// a literal Config is taken as given: its zero block size is refused (Defaults fills it)
		{"zero literal", Config{Model: presets.DefaultModel, GPU: presets.DefaultGPU}, "argument --block-size: invalid choice: '0'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			if tt.name != "zero literal" {
				cfg = Defaults(cfg)
			}
			_, err := New(cfg, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want an error containing %q", err, tt.want)
			}
			if err == nil || cfg.Validate() == nil || !strings.Contains(cfg.Validate().Error(), tt.want) {
				t.Errorf("Validate: %v, want the error New gives", cfg.Validate())
			}
		})
	}
	// fp8_inc is one of vLLM's cache dtypes: 1 byte per element.
	e, err := New(Defaults(Config{EnableChunkedPrefill: true, KVCacheDtype: "fp8_inc"}), nil)
	if err != nil {
		t.Fatalf("fp8_inc: %v", err)
	}
	defer e.Close()
	if got := e.Info().CacheDtype; got != "fp8_inc" {
		t.Errorf("cache dtype %q, want fp8_inc", got)
	}
}

func TestSubmitErrors(t *testing.T) {
	e, err := New(Defaults(Config{EnableChunkedPrefill: true, EnablePrefixCaching: true, MaxModelLen: 4096, Slowdown: 0.01}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tests := []struct {
		name string
		req  Request
		want string
	}{
		// vLLM's exact text for prompt + max_tokens over max_model_len
		{"too long", Request{PromptTokens: prompt(4900, 0), MaxTokens: 100}, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4900 in the messages, 100 in the completion). Please reduce the length of the messages or completion."},
		// no max_tokens and a prompt at max_model_len
		{"prompt too long", Request{PromptTokens: prompt(4096, 0)}, "This model's maximum context length is 4096 tokens. However, you requested 4096 tokens in the messages, Please reduce the length of the messages."},
		// negative max_tokens
		{"negative", Request{PromptTokens: prompt(5, 0), MaxTokens: -1}, "max_tokens must be at least 1, got -1."},
		{"completion too long", Request{PromptTokens: prompt(4000, 0), MaxTokens: 100}, "This model's maximum context length is 4096 tokens. However, you requested 4100 tokens (4000 in the messages, 100 in the completion). Please reduce the length of the messages or completion."},
		// empty prompt
		{"empty", Request{MaxTokens: 5}, "The decoder prompt cannot be empty"},
		// min_tokens over max_tokens
		{"min>max", Request{PromptTokens: prompt(5, 0), MaxTokens: 5, MinTokens: 6}, "min_tokens must be less than or equal to max_tokens=5, got 6."},
		// negative min_tokens
		{"min<0", Request{PromptTokens: prompt(5, 0), MaxTokens: 5, MinTokens: -1}, "min_tokens must be greater than or equal to 0, got -1."},
		// the largest int as max_tokens: vLLM's context message, no overflow
		{"max int", Request{PromptTokens: prompt(5, 0), MaxTokens: math.MaxInt64}, "This model's maximum context length is 4096 tokens. However, you requested 9223372036854775812 tokens (5 in the messages, 9223372036854775807 in the completion). Please reduce the length of the messages or completion."},
		// out-of-vocabulary token
		{"oov", Request{PromptTokens: []int32{1, 999999}, MaxTokens: 5}, "Token id 999999 is out of vocabulary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var re *RequestError
			if err := e.Check(tt.req); !errors.As(err, &re) || re.Status != 400 || !strings.HasPrefix(re.Message, tt.want) {
				t.Errorf("Check: %v, want 400 %q", err, tt.want)
			}
			_, err := e.Submit(context.Background(), tt.req)
			if !errors.As(err, &re) || re.Status != 400 || !strings.HasPrefix(re.Message, tt.want) {
				t.Errorf("Submit: %v, want 400 %q", err, tt.want)
			}
		})
	}
}

// Kill fails in-flight requests and later Submits; Close stops the loop.
func TestKillAndClose(t *testing.T) {
	for _, kill := range []bool{true, false} {
		e, err := New(defaultCfg(), prometheus.NewRegistry())
		if err != nil {
			t.Fatal(err)
		}
		var chs []<-chan Output
		for i := 0; i < 5; i++ {
			ch, err := e.Submit(context.Background(), Request{PromptTokens: prompt(50, i), MaxTokens: 1000, IgnoreEOS: true})
			if err != nil {
				t.Fatal(err)
			}
			chs = append(chs, ch)
		}
		time.Sleep(60 * time.Millisecond) // let a few real steps run
		wantErr := ErrEngineClosed
		if kill {
			e.Kill()
			wantErr = ErrEngineDead
		} else {
			e.Close()
		}
		for i, ch := range chs {
			r := drain(ch)
			if !errors.Is(r.err, wantErr) {
				t.Errorf("kill=%v request %d: err %v, want %v", kill, i, r.err, wantErr)
			}
		}
		if e.Healthy() {
			t.Error("Healthy after shutdown")
		}
		if _, err := e.Submit(context.Background(), Request{PromptTokens: prompt(5, 0), MaxTokens: 2}); !errors.Is(err, wantErr) {
			t.Errorf("Submit after shutdown: %v, want %v", err, wantErr)
		}
		e.Close() // idempotent
	}
}

// Cancelling the context aborts the request and counts it.
func TestAbortByContext(t *testing.T) {
	e, err := New(Defaults(Config{EnableChunkedPrefill: true, Slowdown: 0.1}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := e.Submit(ctx, Request{PromptTokens: prompt(50, 1), MaxTokens: 1000, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	<-ch // first token
	cancel()
	for range ch {
	}
	deadline := time.Now().Add(2 * time.Second)
	for val(e.m.Success["abort"]) != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := val(e.m.Success["abort"]); got != 1 {
		t.Errorf("request_success{abort} = %v, want 1", got)
	}
	if got := val(e.m.Running); got != 0 {
		t.Errorf("running %v after abort", got)
	}
}

// Real time: concurrent clients against the real loop; gauges sampled while
// it runs never exceed max_num_seqs and tokens reconcile.
func TestRealTimeGaugesAndCounters(t *testing.T) {
	cfg := Defaults(Config{EnableChunkedPrefill: true, EnablePrefixCaching: true, MaxNumSeqs: 3, Slowdown: 0.05})
	e, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	stop := make(chan struct{})
	var maxRunning float64
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			maxRunning = max(maxRunning, val(e.m.Running))
			time.Sleep(200 * time.Microsecond)
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ch, err := e.Submit(context.Background(), Request{PromptTokens: prompt(64, i), MaxTokens: 15, IgnoreEOS: true})
			if err != nil {
				t.Error(err)
				return
			}
			r := drain(ch)
			mu.Lock()
			total += r.tokens
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(stop)
	sampler.Wait()
	if maxRunning > 3 || maxRunning == 0 {
		t.Errorf("sampled num_requests_running max %v, want 1..3", maxRunning)
	}
	if got := val(e.m.GenerationTokens); int(got) != total || total != 150 {
		t.Errorf("generation_tokens %v, clients got %d, want 150", got, total)
	}
}

func TestInfo(t *testing.T) {
	e, err := New(Defaults(Config{Model: "someorg/unknown-7b", EnableChunkedPrefill: true}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	info := e.Info()
	if !strings.Contains(info.ModelNote, "has no preset") || info.Model.Name != presets.DefaultModel {
		t.Errorf("unknown model: note %q shape %q", info.ModelNote, info.Model.Name)
	}
	if info.KVBytesPerToken != 114688 || info.BlockSize != 16 || info.NumGPUBlocks <= 0 || info.KVCacheTokens != 16*info.NumGPUBlocks {
		t.Errorf("info %+v", info)
	}
	if info.Config.MaxNumSeqs != 256 || info.Config.MaxNumBatchedTokens != 2048 || info.Config.GPU != presets.DefaultGPU || info.Config.MaxModelLen != 40960 {
		t.Errorf("defaults: %+v", info.Config)
	}
	// vLLM's larger scheduler defaults: GPUs of at least 70 GiB, but not the
	// A100 80GB (vllm-project/vllm#17885: its throughput falls with them).
	for _, c := range []struct {
		gpu          string
		seqs, tokens int
	}{
		{"h100", 1024, 8192},
		{"h200", 1024, 8192},
		{"a100", 256, 2048},
		{"l40s", 256, 2048},
		{"rtx4090", 256, 2048},
	} {
		d := Defaults(Config{GPU: c.gpu, EnableChunkedPrefill: true})
		if d.MaxNumSeqs != c.seqs || d.MaxNumBatchedTokens != c.tokens {
			t.Errorf("%s defaults %d/%d, want %d/%d", c.gpu, d.MaxNumSeqs, d.MaxNumBatchedTokens, c.seqs, c.tokens)
		}
	}
}
