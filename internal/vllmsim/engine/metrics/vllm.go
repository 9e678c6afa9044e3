package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// Bucket boundaries of vLLM V1's histograms (vllm/v1/metrics/loggers.py).
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	itlBuckets  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	reqBuckets  = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	iterBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
)

// Buckets125 is vLLM's build_1_2_5_buckets(max): 1, 2, 5, 10, 20, 50, ... ≤ max.
func Buckets125(maxV int) []float64 {
	var out []float64
	for exp := 1.0; ; exp *= 10 {
		for _, m := range []float64{1, 2, 5} {
			v := m * exp
			if v > float64(maxV) {
				return out
			}
			out = append(out, v)
		}
	}
}

// finishReasons are the request_success label values.
var finishReasons = []string{"stop", "length", "abort", "error"}

// Counter names carry "_total" themselves: client_golang's text format
// prints a counter's name as registered (only its OpenMetrics encoder appends
// the suffix, and it does not double it), and vLLM's exposition shows
// vllm:prompt_tokens_total in both.

// vllmSeries is what only the vLLM family serves.
type vllmSeries struct {
	itl, tpot, e2e, queue, inference, prefill, decode prometheus.Observer
	reqPrompt, reqGen, reqMaxTokens                   prometheus.Observer
	waitingCapacity, waitingDeferred                  prometheus.Gauge
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// addVLLM makes vLLM's series on b, under model_name and engine.
func (s *Set) addVLLM(b *builder, st Setup) {
	v := &vllmSeries{}
	s.v = v
	s.addVLLMGauges(b, v, st)
	s.addVLLMCounters(b, v, st)
	s.addVLLMHistograms(b, v, st)
	s.addPace(b)
	if st.MaxLoRAs != "" {
		// vLLM gives vllm:lora_requests_info no model_name or engine label.
		s.LoRA = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:lora_requests_info", Help: "Running stats on lora requests."},
			[]string{"max_lora", "waiting_lora_adapters", "running_lora_adapters"})
		b.keep(s.LoRA)
	}
	s.cs = append(s.cs, b.cs...)
}

// addVLLMGauges makes the gauges, cache_config_info included.
func (s *Set) addVLLMGauges(b *builder, v *vllmSeries, st Setup) {
	s.Running = b.gauge("vllm:num_requests_running", "Number of requests in model execution batches.")
	s.Waiting = b.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
	byReason := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:num_requests_waiting_by_reason", Help: "Number of requests waiting, by reason: capacity (no KV cache or token budget), deferred (waiting on something else).", ConstLabels: b.labels}, []string{"reason"})
	b.keep(byReason)
	v.waitingCapacity = byReason.WithLabelValues("capacity")
	v.waitingDeferred = byReason.WithLabelValues("deferred")
	if st.V09 {
		s.KVUsage = b.gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.")
	} else {
		s.KVUsage = b.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
	}
	c := st.Cache
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "vllm:cache_config_info", Help: "Information of the LLMEngine CacheConfig",
		ConstLabels: prometheus.Labels{
			"model_name": b.labels["model_name"], "engine": b.labels["engine"],
			"block_size":             strconv.Itoa(c.BlockSize),
			"cache_dtype":            c.Dtype,
			"enable_prefix_caching":  pyBool(c.PrefixCaching),
			"gpu_memory_utilization": PyFloat(c.GPUMemoryUtilization),
			"num_gpu_blocks":         strconv.Itoa(c.NumGPUBlocks),
			"num_cpu_blocks":         "0",
			"kv_cache_size_tokens":   strconv.Itoa(c.NumGPUBlocks * c.BlockSize),
			"swap_space":             c.SwapSpace,
			"sliding_window":         "None",
			"cpu_offload_gb":         "0",
		}})
	info.Set(1)
	b.keep(info)
}

// addVLLMCounters makes the counters, the speculative-decoding ones only
// with speculative decoding.
func (s *Set) addVLLMCounters(b *builder, v *vllmSeries, st Setup) {
	s.PromptTokens = b.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	s.GenerationTokens = b.counter("vllm:generation_tokens_total", "Number of generation tokens processed.")
	s.PromptTokensCached = b.counter("vllm:prompt_tokens_cached_total", "Number of cached prompt tokens (local prefix cache).")
	succ := b.counterVec("vllm:request_success_total", "Count of successfully processed requests.", "finished_reason")
	s.Success = map[string]prometheus.Counter{}
	for _, fr := range finishReasons {
		s.Success[fr] = succ.WithLabelValues(fr)
	}
	pfx := "vllm:prefix_cache_"
	if st.V09 {
		pfx = "vllm:gpu_prefix_cache_"
	}
	s.PrefixQueries = b.counter(pfx+"queries_total", "Prefix cache queries, in terms of number of queried tokens.")
	s.PrefixHits = b.counter(pfx+"hits_total", "Prefix cache hits, in terms of number of cached tokens.")
	s.Preemptions = b.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.")
	if st.SpecTokens == 0 {
		return
	}
	s.SpecDrafts = b.counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.")
	s.SpecDraftTokens = b.counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.")
	s.SpecAccepted = b.counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.")
	perPos := b.counterVec("vllm:spec_decode_num_accepted_tokens_per_pos_total", "Accepted tokens per draft position.", "position")
	for i := 0; i < st.SpecTokens; i++ {
		s.SpecPerPos = append(s.SpecPerPos, perPos.WithLabelValues(strconv.Itoa(i)))
	}
}

// addVLLMHistograms makes the histograms with vLLM V1's buckets.
func (s *Set) addVLLMHistograms(b *builder, v *vllmSeries, st Setup) {
	s.TTFT = b.hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets)
	if st.V09 {
		v.itl = b.hist("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", itlBuckets)
	} else {
		v.itl = b.hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itlBuckets)
	}
	v.tpot = b.hist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", itlBuckets)
	v.e2e = b.hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", reqBuckets)
	v.queue = b.hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", reqBuckets)
	v.inference = b.hist("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", reqBuckets)
	v.prefill = b.hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", reqBuckets)
	v.decode = b.hist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", reqBuckets)
	s.IterTokens = b.hist("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", iterBuckets)
	lenB := Buckets125(st.MaxModelLen)
	v.reqPrompt = b.hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", lenB)
	v.reqGen = b.hist("vllm:request_generation_tokens", "Number of generation tokens processed.", lenB)
	v.reqMaxTokens = b.hist("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", lenB)
}

// finished records the per-request histograms of a request that finished
// with "stop" or "length", as vLLM does.
func (v *vllmSeries) finished(reason string, r Finished) {
	if reason != "stop" && reason != "length" {
		return
	}
	sec := func(d float64) float64 { return max(0, d) }
	v.e2e.Observe(sec(r.End.Sub(r.Arrival).Seconds()))
	v.queue.Observe(sec(r.FirstScheduled.Sub(r.Queued).Seconds()))
	v.inference.Observe(sec(r.End.Sub(r.FirstScheduled).Seconds()))
	v.prefill.Observe(sec(r.FirstToken.Sub(r.FirstScheduled).Seconds()))
	v.decode.Observe(sec(r.End.Sub(r.FirstToken).Seconds()))
	if r.Generated > 1 {
		v.tpot.Observe(sec(r.End.Sub(r.FirstToken).Seconds()) / float64(r.Generated-1))
	}
	v.reqPrompt.Observe(float64(r.PromptLen))
	v.reqGen.Observe(float64(r.Generated))
	v.reqMaxTokens.Observe(float64(r.MaxTokens))
}

// gauges sets vLLM's gauges beyond the common ones.
func (v *vllmSeries) gauges(waiting int) {
	v.waitingCapacity.Set(float64(waiting))
	v.waitingDeferred.Set(0)
}

// PyFloat formats like Python's str(float): 0.9 → "0.9", 1 → "1.0".
func PyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'n' || c == 'I' {
			return s
		}
	}
	return s + ".0"
}
