package pipeline

import (
	"fmt"
	"io"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/vocab/vllmfmt"
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

// summarizeReasoning sets r.Reasoning when any measured request streamed
// thinking.
func (r *Result) summarizeReasoning() {
	var first, answer, rTok, aTok []float64
	out := &Reasoning{Counted: true}
	for i := range r.Load.Samples {
		s := &r.Load.Samples[i]
		if s.Warmup || !s.OK() {
			continue
		}
		fr, fa, n, counted, ok := splitThinking(s)
		if !ok {
			continue
		}
		out.Requests++
		out.Counted = out.Counted && counted
		first = append(first, ms(fr))
		rTok = append(rTok, float64(n))
		aTok = append(aTok, float64(max(0, s.CompletionTokens-n)))
		if fa < 0 {
			out.Unanswered++
			continue
		}
		answer = append(answer, ms(fa))
	}
	if out.Requests == 0 {
		return
	}
	out.FirstReasoning, out.FirstAnswer = stats.NewDist(first, len(first)), stats.NewDist(answer, len(answer))
	out.ReasoningTokens, out.AnswerTokens = stats.NewDist(rTok, len(rTok)), stats.NewDist(aTok, len(aTok))
	r.Reasoning = out
}

// splitThinking reads a sample's chunks: the time to its first thinking
// chunk and to its first answer chunk (−1: none), and its thinking tokens
// (counted false: chunks, for want of per-chunk counts; a chunk that
// carried both parts counts with the answer). ok is false when no chunk
// carried thinking.
func splitThinking(s *sample.Sample) (firstR, firstA time.Duration, tokens int, counted, ok bool) {
	firstA, counted = -1, true
	for _, c := range s.Chunks {
		if c.Part != sample.PartReasoning && firstA < 0 {
			firstA = c.At
		}
		if c.Part == "" {
			continue
		}
		if !ok {
			firstR, ok = c.At, true
		}
		if c.Part == sample.PartBoth {
			continue
		}
		if c.Tokens > 0 {
			tokens += c.Tokens
		} else {
			tokens++
			counted = false
		}
	}
	return firstR, firstA, tokens, counted, ok
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

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
