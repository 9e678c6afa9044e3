package pipeline

import "github.com/vllmperf/vllmperf/internal/run/stats"

// WithPercentiles adds percentiles that every latency distribution of
// the run carries besides stats.DefaultPercentiles (vLLM's
// --metric-percentiles): they appear in the summary, its text and its
// vLLM JSON (pNN_ttft_ms).
func WithPercentiles(p []float64) Option {
	return func(o *options) { o.percentiles = p }
}

// withExpected is base with the completion tokens every request was
// promised (stats.Options.ExpectedOutputTokens).
func withExpected(base stats.Options, tokens int) stats.Options {
	base.ExpectedOutputTokens = tokens
	return base
}
