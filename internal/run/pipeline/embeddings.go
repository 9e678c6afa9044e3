package pipeline

import (
	"fmt"

	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
)

// reconcileEmbeddings matches an unstreamed run's (embeddings, rerank)
// prompt tokens, as the answers' usage reported them (warm-up included),
// with the server's vllm:prompt_tokens_total: the one counter such a run
// moves. A
// difference is a warning naming both; the suite's reconcile checks judge
// it (package check).
func reconcileEmbeddings(r *result.Result) {
	if !r.Endpoint.Unstreamed() || r.Delta == nil {
		return
	}
	server, err := r.Delta.Counter(scrape.PromptTokensTotal)
	if err != nil {
		r.Warnings = append(r.Warnings, fmt.Errorf("%s: the prompt tokens were not reconciled: %w", r.Endpoint, err))
		return
	}
	client := 0
	for _, s := range r.Load.Samples {
		if !s.OK() {
			return // the server may have counted part of a failed request
		}
		client += s.PromptTokens
	}
	if float64(client) != server {
		r.Warnings = append(r.Warnings, fmt.Errorf("%s: the answers' usage says %d prompt tokens (warm-up included), the server's Δ%s %g: another client used the server, or it miscounts", r.Endpoint, client, scrape.PromptTokensTotal, server))
	}
}
