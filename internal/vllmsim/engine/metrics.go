package engine

import (
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Bucket boundaries of vLLM V1's histograms (vllm/v1/metrics/loggers.py).
var (
	ttftBuckets = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	itlBuckets  = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
	reqBuckets  = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	iterBuckets = []float64{1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}
)

// buckets125 is vLLM's build_1_2_5_buckets(max): 1, 2, 5, 10, 20, 50, ... ≤ max.
func buckets125(maxV int) []float64 {
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

// metrics holds the engine's Prometheus collectors, already curried with
// model_name and engine.
type metrics struct {
	running, waiting                 prometheus.Gauge
	waitingCapacity, waitingDeferred prometheus.Gauge
	kvUsage                          prometheus.Gauge

	promptTokens, generationTokens, promptTokensCached prometheus.Counter
	success                                            map[string]prometheus.Counter
	prefixQueries, prefixHits, preemptions             prometheus.Counter

	specDrafts, specDraftTokens, specAccepted prometheus.Counter
	specPerPos                                []prometheus.Counter

	ttft, itl, tpot, e2e, queue, inference, prefill, decode prometheus.Observer
	iterTokens, reqPrompt, reqGen, reqMaxTokens             prometheus.Observer

	pace pace      // the real-time loop's account (pace.go)
	lora *loraInfo // vllm:lora_requests_info; nil without LoRA
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// metricsBuilder makes collectors with the engine's constant labels and
// keeps them for registration.
type metricsBuilder struct {
	labels prometheus.Labels
	cs     []prometheus.Collector
}

func (b *metricsBuilder) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: b.labels})
	b.cs = append(b.cs, g)
	return g
}

func (b *metricsBuilder) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: b.labels})
	b.cs = append(b.cs, c)
	return c
}

func (b *metricsBuilder) counterVec(name, help, label string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: b.labels}, []string{label})
	b.cs = append(b.cs, c)
	return c
}

func (b *metricsBuilder) hist(name, help string, buckets []float64) prometheus.Observer {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets, ConstLabels: b.labels})
	b.cs = append(b.cs, h)
	return h
}

// register registers every collector on reg, or none.
func (b *metricsBuilder) register(reg prometheus.Registerer) error {
	for i, c := range b.cs {
		if err := reg.Register(c); err != nil {
			for _, done := range b.cs[:i] {
				reg.Unregister(done)
			}
			return fmt.Errorf("register engine metrics: %w (use a fresh prometheus.Registry per engine)", err)
		}
	}
	return nil
}

// newMetrics makes the engine's metrics under r's metric names and
// registers them on reg (nil: not registered).
func newMetrics(r *resolved, modelName string, reg prometheus.Registerer) (*metrics, error) {
	b := &metricsBuilder{labels: prometheus.Labels{"model_name": modelName, "engine": "0"}}
	m := &metrics{}
	m.addGauges(b, r)
	m.addCounters(b, r)
	m.addHistograms(b, r)
	m.addPace(b)
	m.addLoRA(b, r)
	if reg != nil {
		if err := b.register(reg); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// addGauges makes the gauges, cache_config_info included.
func (m *metrics) addGauges(b *metricsBuilder, r *resolved) {
	m.running = b.gauge("vllm:num_requests_running", "Number of requests in model execution batches.")
	m.waiting = b.gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
	byReason := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "vllm:num_requests_waiting_by_reason", Help: "Number of requests waiting, by reason: capacity (no KV cache or token budget), deferred (waiting on something else).", ConstLabels: b.labels}, []string{"reason"})
	b.cs = append(b.cs, byReason)
	m.waitingCapacity = byReason.WithLabelValues("capacity")
	m.waitingDeferred = byReason.WithLabelValues("deferred")
	if r.cfg.MetricsVersion == MetricsV09 {
		m.kvUsage = b.gauge("vllm:gpu_cache_usage_perc", "GPU KV-cache usage. 1 means 100 percent usage.")
	} else {
		m.kvUsage = b.gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
	}
	info := prometheus.NewGauge(prometheus.GaugeOpts{Name: "vllm:cache_config_info", Help: "Information of the LLMEngine CacheConfig",
		ConstLabels: prometheus.Labels{
			"model_name": b.labels["model_name"], "engine": b.labels["engine"],
			"block_size":             strconv.Itoa(r.cfg.BlockSize),
			"cache_dtype":            r.cacheDtype,
			"enable_prefix_caching":  pyBool(r.cfg.EnablePrefixCaching),
			"gpu_memory_utilization": pyFloat(r.cfg.GPUMemoryUtilization),
			"num_gpu_blocks":         strconv.Itoa(r.numGPUBlocks),
			"num_cpu_blocks":         "0",
			"kv_cache_size_tokens":   strconv.Itoa(r.numGPUBlocks * r.cfg.BlockSize),
			"swap_space":             swapSpaceLabel(r.cfg.SwapSpace),
			"sliding_window":         "None",
			"cpu_offload_gb":         "0",
		}})
	info.Set(1)
	b.cs = append(b.cs, info)
}

// addCounters makes the counters, the speculative-decoding ones only with
// a speculative config.
func (m *metrics) addCounters(b *metricsBuilder, r *resolved) {
	m.promptTokens = b.counter("vllm:prompt_tokens_total", "Number of prefill tokens processed.")
	m.generationTokens = b.counter("vllm:generation_tokens_total", "Number of generation tokens processed.")
	m.promptTokensCached = b.counter("vllm:prompt_tokens_cached_total", "Number of cached prompt tokens (local prefix cache).")
	succ := b.counterVec("vllm:request_success_total", "Count of successfully processed requests.", "finished_reason")
	m.success = map[string]prometheus.Counter{}
	for _, fr := range finishReasons {
		m.success[fr] = succ.WithLabelValues(fr)
	}
	pfx := "vllm:prefix_cache_"
	if r.cfg.MetricsVersion == MetricsV09 {
		pfx = "vllm:gpu_prefix_cache_"
	}
	m.prefixQueries = b.counter(pfx+"queries_total", "Prefix cache queries, in terms of number of queried tokens.")
	m.prefixHits = b.counter(pfx+"hits_total", "Prefix cache hits, in terms of number of cached tokens.")
	m.preemptions = b.counter("vllm:num_preemptions_total", "Cumulative number of preemption from the engine.")
	if r.spec == nil {
		return
	}
	m.specDrafts = b.counter("vllm:spec_decode_num_drafts_total", "Number of spec decoding drafts.")
	m.specDraftTokens = b.counter("vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.")
	m.specAccepted = b.counter("vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.")
	perPos := b.counterVec("vllm:spec_decode_num_accepted_tokens_per_pos_total", "Accepted tokens per draft position.", "position")
	for i := 0; i < r.spec.NumSpeculativeTokens; i++ {
		m.specPerPos = append(m.specPerPos, perPos.WithLabelValues(strconv.Itoa(i)))
	}
}

// addHistograms makes the histograms with vLLM V1's buckets.
func (m *metrics) addHistograms(b *metricsBuilder, r *resolved) {
	m.ttft = b.hist("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets)
	if r.cfg.MetricsVersion == MetricsV09 {
		m.itl = b.hist("vllm:time_per_output_token_seconds", "Histogram of time per output token in seconds.", itlBuckets)
	} else {
		m.itl = b.hist("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", itlBuckets)
	}
	m.tpot = b.hist("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", itlBuckets)
	m.e2e = b.hist("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", reqBuckets)
	m.queue = b.hist("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", reqBuckets)
	m.inference = b.hist("vllm:request_inference_time_seconds", "Histogram of time spent in RUNNING phase for request.", reqBuckets)
	m.prefill = b.hist("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", reqBuckets)
	m.decode = b.hist("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", reqBuckets)
	m.iterTokens = b.hist("vllm:iteration_tokens_total", "Histogram of number of tokens per engine_step.", iterBuckets)
	lenB := buckets125(r.cfg.MaxModelLen)
	m.reqPrompt = b.hist("vllm:request_prompt_tokens", "Number of prefill tokens processed.", lenB)
	m.reqGen = b.hist("vllm:request_generation_tokens", "Number of generation tokens processed.", lenB)
	m.reqMaxTokens = b.hist("vllm:request_params_max_tokens", "Histogram of the max_tokens request parameter.", lenB)
}

// swapSpaceLabel is cache_config_info's swap_space as vLLM prints it: its
// default is the int 4 ("4"), a value given on the command line is a float
// ("8.0").
func swapSpaceLabel(gib float64) string {
	if gib == DefaultSwapSpace {
		return strconv.Itoa(DefaultSwapSpace)
	}
	return pyFloat(gib)
}

// observeFinished records the histograms of a request that finished with
// "stop" or "length" at now.
func (m *metrics) observeFinished(s *seq, now time.Time) {
	sec := func(d time.Duration) float64 { return max(0, d.Seconds()) }
	m.e2e.Observe(sec(now.Sub(s.arrival)))
	m.queue.Observe(sec(s.firstScheduled.Sub(s.queued)))
	m.inference.Observe(sec(now.Sub(s.firstScheduled)))
	m.prefill.Observe(sec(s.firstToken.Sub(s.firstScheduled)))
	m.decode.Observe(sec(now.Sub(s.firstToken)))
	if s.generated > 1 {
		m.tpot.Observe(sec(now.Sub(s.firstToken)) / float64(s.generated-1))
	}
	m.reqPrompt.Observe(float64(s.promptLen))
	m.reqGen.Observe(float64(s.generated))
	m.reqMaxTokens.Observe(float64(s.maxTokens))
}

// pyFloat formats like Python's str(float): 0.9 → "0.9", 1 → "1.0".
func pyFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'n' || c == 'I' {
			return s
		}
	}
	return s + ".0"
}
