package pipeline

import (
	"time"

	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
)

// summarizeReasoning sets r.Reasoning when any measured request streamed
// thinking.
func summarizeReasoning(r *result.Result) {
	var first, answer, rTok, aTok []float64
	out := &result.Reasoning{Counted: true}
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
