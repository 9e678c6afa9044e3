package scrape

import (
	"strings"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/vllmsim/simpace"
)

// Canonical names (vLLM V1, without a family's prefix) of the metrics the
// suite reads: the suite's vocabulary, whatever the server family. A
// family (package serverfamily) says which prefix its exposition puts
// before them and which other names stand for them.
// Counters keep the _total the text format shows; histograms are named by
// their base name (without _bucket, _sum, _count).
const (
	NumRequestsRunning         = "num_requests_running"
	NumRequestsWaiting         = "num_requests_waiting"
	NumRequestsWaitingByReason = "num_requests_waiting_by_reason"
	KVCacheUsagePerc           = "kv_cache_usage_perc"
	CacheConfigInfo            = "cache_config_info"
	LoRARequestsInfo           = "lora_requests_info"

	PromptTokensTotal        = "prompt_tokens_total"
	GenerationTokensTotal    = "generation_tokens_total"
	PromptTokensCachedTotal  = "prompt_tokens_cached_total"
	RequestSuccessTotal      = "request_success_total"
	PrefixCacheQueriesTotal  = "prefix_cache_queries_total"
	PrefixCacheHitsTotal     = "prefix_cache_hits_total"
	NumPreemptionsTotal      = "num_preemptions_total"
	SpecDecodeDraftsTotal    = "spec_decode_num_drafts_total"
	SpecDecodeDraftTokens    = "spec_decode_num_draft_tokens_total"
	SpecDecodeAcceptedTokens = "spec_decode_num_accepted_tokens_total"

	TimeToFirstTokenSeconds       = "time_to_first_token_seconds"
	InterTokenLatencySeconds      = "inter_token_latency_seconds"
	RequestTimePerOutputToken     = "request_time_per_output_token_seconds"
	E2ERequestLatencySeconds      = "e2e_request_latency_seconds"
	RequestQueueTimeSeconds       = "request_queue_time_seconds"
	RequestPrefillTimeSeconds     = "request_prefill_time_seconds"
	RequestDecodeTimeSeconds      = "request_decode_time_seconds"
	RequestInferenceTimeSeconds   = "request_inference_time_seconds"
	IterationTokensTotal          = "iteration_tokens_total"
	RequestPromptTokens           = "request_prompt_tokens"
	RequestGenerationTokens       = "request_generation_tokens"
	RequestParamsMaxTokens        = "request_params_max_tokens"
	SpecDecodeAcceptedTokensByPos = "spec_decode_num_accepted_tokens_per_pos_total"
)

// Labels that identify where a series comes from; values are summed over
// them. Every other label is kept as a breakdown (Metric.Parts).
const (
	LabelEngine    = "engine"
	LabelModelName = "model_name"
	// LabelReplica is the label a fleet's snapshot (Fleet, Prometheus)
	// puts on every series: which replica it came from.
	LabelReplica = "replica"
)

// known gives the kind of every vLLM V1 metric this package recognises by
// name, so that an exposition without # TYPE lines still reads right.
var known = map[string]Kind{
	NumRequestsRunning:         KindGauge,
	NumRequestsWaiting:         KindGauge,
	NumRequestsWaitingByReason: KindGauge,
	KVCacheUsagePerc:           KindGauge,
	CacheConfigInfo:            KindInfo,
	"lora_requests_info":       KindInfo,

	PromptTokensTotal:             KindCounter,
	GenerationTokensTotal:         KindCounter,
	PromptTokensCachedTotal:       KindCounter,
	RequestSuccessTotal:           KindCounter,
	PrefixCacheQueriesTotal:       KindCounter,
	PrefixCacheHitsTotal:          KindCounter,
	NumPreemptionsTotal:           KindCounter,
	SpecDecodeDraftsTotal:         KindCounter,
	SpecDecodeDraftTokens:         KindCounter,
	SpecDecodeAcceptedTokens:      KindCounter,
	SpecDecodeAcceptedTokensByPos: KindCounter,

	TimeToFirstTokenSeconds:     KindHistogram,
	InterTokenLatencySeconds:    KindHistogram,
	RequestTimePerOutputToken:   KindHistogram,
	E2ERequestLatencySeconds:    KindHistogram,
	RequestQueueTimeSeconds:     KindHistogram,
	RequestPrefillTimeSeconds:   KindHistogram,
	RequestDecodeTimeSeconds:    KindHistogram,
	RequestInferenceTimeSeconds: KindHistogram,
	IterationTokensTotal:        KindHistogram,
	RequestPromptTokens:         KindHistogram,
	RequestGenerationTokens:     KindHistogram,
	RequestParamsMaxTokens:      KindHistogram,
}

// maxOverSeries are ratios that are not summed over engines (two engines at
// 60 % are not at 120 %): their Value is the fullest engine's.
var maxOverSeries = map[string]bool{
	KVCacheUsagePerc: true,
}

// Canonical returns the V1 name, without vLLM's prefix, that name is known
// by in vLLM's exposition (serverfamily.VLLM), so
// Canonical("vllm:gpu_cache_usage_perc") is "kv_cache_usage_perc". Names it
// does not know come back without the prefix and otherwise unchanged.
func Canonical(name string) string { return serverfamily.VLLM.Canonical(name) }

// exposed is the name a canonical name is exposed under in fam's
// exposition: with its prefix, except the simulator's pace series (package
// simpace), which have none.
func exposed(fam *serverfamily.Family, canonical string) string {
	if simpace.Owned(canonical) {
		return canonical
	}
	return serverfamily.OrDefault(fam).Metrics.Prefix + canonical
}

// kindByName guesses the kind of a sample without a # TYPE line: the
// catalogue first, then Prometheus naming conventions (_total is a counter,
// _info an info metric); anything else stays untyped.
func kindByName(canonical string) Kind {
	if k, ok := known[canonical]; ok {
		return k
	}
	switch {
	case strings.HasSuffix(canonical, "_total"):
		return KindCounter
	case strings.HasSuffix(canonical, "_info"):
		return KindInfo
	}
	return KindUntyped
}

// Known reports whether name (with or without vLLM's prefix) is a vLLM
// metric this package knows (serverfamily.VLLM's names): a V1 name, a
// renamed or a removed one, or a series of one (a counter's _total written
// without it, a histogram's _bucket, _sum or _count).
func Known(name string) bool {
	fam := serverfamily.VLLM
	name = strings.TrimPrefix(name, fam.Metrics.Prefix)
	if _, ok := known[fam.Canonical(name)]; ok || fam.IsRemoved(name) || known[fam.Canonical(name+"_total")] == KindCounter {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && known[fam.Canonical(base)] == KindHistogram {
			return true
		}
	}
	return false
}
