package result

import (
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/run/vllmfmt"
)

// JSONExtras are the run's parts vLLM's --save-result has no key for,
// for vllmfmt.WriteJSONWith: lora_adapters (each adapter's figures, in
// the order given, and adapters_ran, what vllm:lora_requests_info showed)
// and reasoning (reasoning.go's figures). None without adapters or
// thinking.
func (r *Result) JSONExtras() []vllmfmt.Extra {
	var out []vllmfmt.Extra
	if len(r.AdapterNames) > 0 {
		vals := make([]any, len(r.AdapterNames))
		for i, n := range r.AdapterNames {
			vals[i] = vllmfmt.Figures(r.Adapters[n])
		}
		out = append(out, vllmfmt.Extra{Key: "lora_adapters", Value: vllmfmt.Ordered(r.AdapterNames, vals)},
			vllmfmt.Extra{Key: "lora_adapters_ran", Value: orEmpty(r.AdaptersRan)})
	}
	if re := r.Reasoning; re != nil {
		keys := []string{"requests", "unanswered", "tokens_counted", "ttft_reasoning_ms", "ttft_answer_ms", "reasoning_tokens", "answer_tokens"}
		vals := []any{re.Requests, re.Unanswered, re.Counted, distJSON(re.FirstReasoning), distJSON(re.FirstAnswer), distJSON(re.ReasoningTokens), distJSON(re.AnswerTokens)}
		out = append(out, vllmfmt.Extra{Key: "reasoning", Value: vllmfmt.Ordered(keys, vals)})
	}
	return out
}

// distJSON is a distribution's mean, median and p99, null without values.
func distJSON(d stats.Dist) any {
	if d.N == 0 {
		return nil
	}
	p99, _ := d.Pct(99)
	return vllmfmt.Ordered([]string{"n", "mean", "median", "p99"}, []any{d.N, d.Mean, d.Median, p99})
}

// orEmpty is names, or an empty list rather than null.
func orEmpty(names []string) []string {
	if names == nil {
		return []string{}
	}
	return names
}
