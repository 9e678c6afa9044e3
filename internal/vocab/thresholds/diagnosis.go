package thresholds

import "time"

// Diagnosis holds the limits at which package diagnose's rules fire,
// thresholds.yaml's diagnose: (top level only). Each field says why its default is what it is; the numbers in
// the reasons were measured with `make bench` on the simulator (quick
// size, every profile) unless they say otherwise.
type Diagnosis struct {
	// HighTTFTSteps: TTFT p99 at or above this many decode steps (the
	// run's median gap between chunks) is high. A prompt's prefill takes a
	// step or two (at concurrency 1, 518 prompt tokens cost 1.4 steps and
	// 1,542 tokens 2.6); past 10 steps a request waited, or its prefill
	// was very long. Measured in steps, the rule means the same on any GPU.
	HighTTFTSteps float64
	// WaitingShare: a waiting queue that is non-empty in at least this
	// share of the sampler's points during the load is a queue, not the
	// blip of a burst of arrivals (a closed-loop wave shows waiting > 0
	// for one point).
	WaitingShare float64
	// LongPromptTokens: prompts averaging at least this many tokens are
	// long: their prefill is several steps of compute on its own (the seed
	// names prompt length first among TTFT's causes).
	LongPromptTokens float64
	// TPOTJitterCV: per-request TPOT varying this much across requests
	// (coefficient of variation) is jitter. Every running request gets one
	// token per step, so a steady engine keeps the requests' TPOT within a
	// few percent of each other (≤ 0.05 in every healthy run measured);
	// 0.15 is three times that.
	TPOTJitterCV float64
	// ITLJitterCV: gaps between a stream's chunks varying this much
	// (coefficient of variation, pooled over the run) is stutter. Steps
	// that carry a chunked prefill already make the gaps uneven (CV up to
	// 0.24 measured in healthy runs); 0.35 is beyond that.
	ITLJitterCV float64
	// MinJitterRequests: TPOT jitter is judged on at least this many
	// requests (and ten times as many chunk gaps); fewer say too little
	// about a spread.
	MinJitterRequests int
	// BatchSwing: the running batch swings when the middle half of the
	// load's sampler points spans at least this share of its upper
	// quartile ((p75 − p25) / p75): the step time, and with it TPOT,
	// follows the batch size.
	BatchSwing float64
	// SpecAcceptMin: speculative decoding accepting fewer than this share
	// of its draft tokens mostly wastes the verify compute: with 5 drafts
	// a step then emits under two tokens on average.
	SpecAcceptMin float64
	// SpecAcceptDrop: a run whose acceptance is this much (relative)
	// below its profile's median acceptance has falling acceptance.
	SpecAcceptDrop float64
	// KVHigh: KV-cache usage at or above this is near the ceiling: vLLM
	// then preempts running requests to admit others, and the seed warns of
	// swapping, OOM and tail latency. The same 90% as thresholds.yaml's
	// checks.kv_peak_max default.
	KVHigh float64
	// KVFree: KV-cache usage below this leaves room for a larger batch;
	// raising --max-num-seqs then costs memory that is there.
	KVFree float64
	// SmallBatchShare: a running batch that peaks at or below this share
	// of the requests in flight is small: the rest waited.
	SmallBatchShare float64
	// ThroughputShare: tokens/s at or below this share of what the
	// requests in flight would produce at the run's own TPOT
	// (concurrency / TPOT p50) is low: the server left throughput unused.
	// Healthy closed-loop runs measured 80–95% (TTFT is the rest).
	ThroughputShare float64
	// ColdFactor and ColdExtra: the first request after start is cold when
	// its TTFT is at least ColdFactor times the warm TTFT and at least
	// ColdExtra more. The seed saw 355 ms cold against 40 ms warm (9×);
	// 50 ms is about what a person notices.
	ColdFactor float64
	ColdExtra  time.Duration
}

// DefaultDiagnosis is the shipped thresholds.yaml's diagnose:.
var DefaultDiagnosis = func() (d Diagnosis) { builtin.diagnose.apply(&d); return d }()

// Diagnosis returns the diagnosis limits: DefaultDiagnosis with what the
// file's diagnose: sets.
func (s *Set) Diagnosis() Diagnosis {
	d := DefaultDiagnosis
	s.diagnose.apply(&d)
	return d
}

// diagnoseYAML is thresholds.yaml's diagnose: section.
type diagnoseYAML struct {
	HighTTFTSteps     *float64  `yaml:"high_ttft_steps"`
	WaitingShare      *Fraction `yaml:"waiting_share"`
	LongPromptTokens  *float64  `yaml:"long_prompt_tokens"`
	TPOTJitterCV      *Fraction `yaml:"tpot_jitter_cv"`
	ITLJitterCV       *Fraction `yaml:"itl_jitter_cv"`
	MinJitterRequests *int      `yaml:"min_jitter_requests"`
	BatchSwing        *Fraction `yaml:"batch_swing"`
	SpecAcceptMin     *Fraction `yaml:"spec_accept_min"`
	SpecAcceptDrop    *Fraction `yaml:"spec_accept_drop"`
	KVHigh            *Fraction `yaml:"kv_high"`
	KVFree            *Fraction `yaml:"kv_free"`
	SmallBatchShare   *Fraction `yaml:"small_batch_share"`
	ThroughputShare   *Fraction `yaml:"throughput_share"`
	ColdFactor        *float64  `yaml:"cold_factor"`
	ColdExtra         *Duration `yaml:"cold_extra"`
}

func (y *diagnoseYAML) apply(d *Diagnosis) {
	if y == nil {
		return
	}
	setIf(&d.HighTTFTSteps, y.HighTTFTSteps)
	setFrac(&d.WaitingShare, y.WaitingShare)
	setIf(&d.LongPromptTokens, y.LongPromptTokens)
	setFrac(&d.TPOTJitterCV, y.TPOTJitterCV)
	setFrac(&d.ITLJitterCV, y.ITLJitterCV)
	setIf(&d.MinJitterRequests, y.MinJitterRequests)
	setFrac(&d.BatchSwing, y.BatchSwing)
	setFrac(&d.SpecAcceptMin, y.SpecAcceptMin)
	setFrac(&d.SpecAcceptDrop, y.SpecAcceptDrop)
	setFrac(&d.KVHigh, y.KVHigh)
	setFrac(&d.KVFree, y.KVFree)
	setFrac(&d.SmallBatchShare, y.SmallBatchShare)
	setFrac(&d.ThroughputShare, y.ThroughputShare)
	setIf(&d.ColdFactor, y.ColdFactor)
	setDur(&d.ColdExtra, y.ColdExtra)
}
