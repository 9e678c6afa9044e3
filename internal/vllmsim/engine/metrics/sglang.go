package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// SGLangSource is the SGLang source the SGLang family follows:
// python/sglang/srt/metrics/collector.py of sgl-project/sglang at this
// commit (TokenizerMetricsCollector, SchedulerMetricsCollector).
const SGLangSource = "sgl-project/sglang@00ae9c1590d2d0bb6c0bfff39e312c34ae3dd538"

// SGLang's default bucket boundaries (collector.py).
var (
	sglTTFTBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	sglE2EBuckets  = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
	sglITLBuckets  = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100,
		0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000}
	sglRetractionBuckets = []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 75, 100}
	sglQueueBuckets      = []float64{0.0, 0.1, 0.2, 0.5, 1, 2, 3, 4, 5, 10, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100,
		200, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000, 2500, 3000}
)

// SGLang's label sets. The collectors take their label names from their
// callers: the tokenizer manager passes model_name and engine_type, the
// scheduler adds its ranks (collector.py reads labels["moe_ep_rank"]). One
// unified (not disaggregated) engine on rank 0 of everything.
func sglTokenizerLabels(model string) prometheus.Labels {
	return prometheus.Labels{"model_name": model, "engine_type": "unified"}
}

func sglSchedulerLabels(model string) prometheus.Labels {
	return prometheus.Labels{"model_name": model, "engine_type": "unified", "tp_rank": "0", "pp_rank": "0", "moe_ep_rank": "0"}
}

// sglangSeries is what only the SGLang family serves.
type sglangSeries struct {
	requests, aborted, structured prometheus.Counter
	itl, e2e, retractions, queue  prometheus.Observer
	hitRate, specLen, specRate    prometheus.Gauge
	// The prefix-cache lookups since the gauges were last set: SGLang's
	// cache_hit_rate is that of the last prefill batch.
	queried, hit int
	// The speculative decoding since the gauges were last set: forward
	// passes (one a request a step), tokens they accepted, tokens they
	// verified (the drafts and the target model's own).
	forwards, accepted, verified int
}

// addSGLang makes SGLang's series: those whose quantity the engine models,
// under SGLang's names, labels and buckets. vLLM's series with no SGLang
// counterpart are made unregistered, so the engine records into them alike.
func (s *Set) addSGLang(st Setup) {
	s.addVLLM(&builder{skip: true}, st)
	s.v, s.cs = nil, nil
	g := &sglangSeries{}
	s.g = g
	tok := &builder{labels: sglTokenizerLabels(st.ModelName)}
	s.PromptTokens = tok.counter("sglang:prompt_tokens_total", "Number of prefill tokens processed.")
	s.GenerationTokens = tok.counter("sglang:generation_tokens_total", "Number of generation tokens processed.")
	s.PromptTokensCached = tok.counter("sglang:cached_tokens_total", "Number of cached prompt tokens.")
	g.requests = tok.counter("sglang:num_requests_total", "Number of requests processed.")
	g.structured = tok.counter("sglang:num_so_requests_total", "Number of structured output requests processed.")
	g.aborted = tok.counter("sglang:num_aborted_requests_total", "Number of requests aborted.")
	s.TTFT = tok.hist("sglang:time_to_first_token_seconds", "Histogram of time to first token in seconds.", sglTTFTBuckets)
	g.itl = tok.hist("sglang:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", sglITLBuckets)
	g.e2e = tok.hist("sglang:e2e_request_latency_seconds", "Histogram of End-to-end request latency in seconds", sglE2EBuckets)
	g.retractions = tok.hist("sglang:num_retractions", "Histogram of retraction counts per request.", sglRetractionBuckets)

	sch := &builder{labels: sglSchedulerLabels(st.ModelName)}
	s.Running = sch.gauge("sglang:num_running_reqs", "The number of running requests.")
	s.Waiting = sch.gauge("sglang:num_queue_reqs", "The number of requests in the waiting queue.")
	s.KVUsage = sch.gauge("sglang:token_usage", "The token usage.")
	g.hitRate = sch.gauge("sglang:cache_hit_rate", "The prefix cache hit rate.")
	maxTokens := sch.gauge("sglang:max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.")
	maxTokens.Set(float64(st.Cache.NumGPUBlocks * st.Cache.BlockSize))
	g.specLen = sch.gauge("sglang:spec_accept_length", "The average acceptance length of speculative decoding.")
	g.specRate = sch.gauge("sglang:spec_accept_rate", "The average acceptance rate of speculative decoding (`accepted tokens / total draft tokens` in batch).")
	s.Preemptions = sch.counter("sglang:num_retracted_requests_total", "Total number of retracted requests.")
	g.queue = sch.hist("sglang:queue_time_seconds", "Histogram of queueing time in seconds.", sglQueueBuckets)
	s.addPace(sch)
	s.cs = append(tok.cs, sch.cs...)
}

// finished records a finished request as SGLang's tokenizer manager does:
// every finished request counts in num_requests_total (an abort in
// num_aborted_requests_total too), with its retractions; the end-to-end
// latency of those that ran to "stop" or "length".
func (g *sglangSeries) finished(reason string, r Finished) {
	g.requests.Inc()
	if reason == "abort" {
		g.aborted.Inc()
	}
	if r.Guided {
		g.structured.Inc()
	}
	g.retractions.Observe(float64(r.Preemptions))
	if reason == "stop" || reason == "length" {
		g.e2e.Observe(max(0, r.End.Sub(r.Arrival).Seconds()))
	}
}

// tokenGap is SGLang's observe_inter_token_latency: the gap, spread over
// the output's n tokens, counts n observations of gap/n (sum: the gap).
func (g *sglangSeries) tokenGap(gap float64, n int) {
	n = max(1, n)
	for range n {
		g.itl.Observe(gap / float64(n))
	}
}

// scheduled records a first scheduling: its queueing time, and its prefix
// lookup for cache_hit_rate.
func (g *sglangSeries) scheduled(queue float64, caching bool, queried, hit int) {
	g.queue.Observe(max(0, queue))
	if caching {
		g.queried += queried
		g.hit += hit
	}
}

// drafted accounts one request's speculative step for the spec gauges.
func (g *sglangSeries) drafted(drafts, accepted int) {
	g.forwards++
	g.accepted += accepted
	g.verified += drafts + 1
}

// gauges sets cache_hit_rate from the lookups since the last call, and the
// speculative gauges from the speculative steps since then, when there
// were any (a step without leaves them). As SGLang's scheduler computes
// them: the acceptance length is (accepted + forwards) / forwards, the
// rate that over the tokens verified (forwards × its draft tokens,
// counting the target model's own).
func (g *sglangSeries) gauges() {
	if g.queried > 0 {
		g.hitRate.Set(float64(g.hit) / float64(g.queried))
		g.queried, g.hit = 0, 0
	}
	if g.forwards > 0 {
		g.specLen.Set(float64(g.accepted+g.forwards) / float64(g.forwards))
		g.specRate.Set(float64(g.accepted+g.forwards) / float64(g.verified))
		g.forwards, g.accepted, g.verified = 0, 0, 0
	}
}
