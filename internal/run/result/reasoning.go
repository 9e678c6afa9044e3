package result

import (
	"fmt"
	"io"

	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/run/vllmfmt"
)

// Reasoning summarizes a reasoning model's answers: those whose stream
// carried thinking (delta.reasoning_content, or delta.reasoning in later
// vLLM releases) before the answer. The run's TTFT, TPOT and ITL cover
// both parts, as vllm bench serve's do; these split them.
type Reasoning struct {
	// Requests are the completed measured requests that streamed
	// thinking; Unanswered of them ended (max_tokens) before any answer.
	Requests, Unanswered int
	// FirstReasoning is the time to the first thinking chunk and
	// FirstAnswer the time to the first answer chunk, in ms.
	FirstReasoning, FirstAnswer stats.Dist
	// ReasoningTokens and AnswerTokens split each request's
	// usage.completion_tokens: the thinking chunks' tokens (continuous
	// usage stats; a tag counts with the part after it) and the rest.
	// Counted is false when the server reported no per-chunk counts: the
	// thinking is then counted in chunks.
	ReasoningTokens, AnswerTokens stats.Dist
	Counted                       bool
}

// writeReasoning writes the Reasoning block, in vllm bench serve's layout.
func (r *Result) writeReasoning(w io.Writer) error {
	re := r.Reasoning
	if re == nil {
		return nil
	}
	unit := "tokens"
	if !re.Counted {
		unit = "chunks"
	}
	p99 := func(d stats.Dist) float64 { v, _ := d.Pct(99); return v }
	f2 := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	if re.FirstAnswer.N == 0 {
		f2 = func(v float64) string { return "n/a (no answer)" }
	}
	n2 := func(v float64) string { return fmt.Sprintf("%.2f", v) }
	lines := []struct {
		label string
		value string
	}{
		{"Requests with reasoning:", fmt.Sprint(re.Requests)},
		{"Requests without an answer:", fmt.Sprint(re.Unanswered)},
		{"Mean TTFT reasoning (ms):", n2(re.FirstReasoning.Mean)},
		{"Median TTFT reasoning (ms):", n2(re.FirstReasoning.Median)},
		{"P99 TTFT reasoning (ms):", n2(p99(re.FirstReasoning))},
		{"Mean TTFT answer (ms):", f2(re.FirstAnswer.Mean)},
		{"Median TTFT answer (ms):", f2(re.FirstAnswer.Median)},
		{"P99 TTFT answer (ms):", f2(p99(re.FirstAnswer))},
		{"Mean reasoning " + unit + ":", n2(re.ReasoningTokens.Mean)},
		{"Mean answer tokens:", n2(re.AnswerTokens.Mean)},
		{"Total reasoning " + unit + ":", fmt.Sprint(int(re.ReasoningTokens.Mean*float64(re.ReasoningTokens.N) + 0.5))},
	}
	if _, err := fmt.Fprintf(w, "%s\n", vllmfmt.Header(" Reasoning (TPOT above spans both parts) ", '-')); err != nil {
		return err
	}
	for _, l := range lines {
		if _, err := fmt.Fprintf(w, "%-40s %s\n", l.label, l.value); err != nil {
			return err
		}
	}
	return nil
}
