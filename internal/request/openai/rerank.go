package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// Rerank is vLLM's /v1/rerank: a query and documents in, each document's
// relevance score out, unstreamed, as vllm bench serve's vllm-rerank
// backend sends it. Each request carries one query and one document (that
// backend's default, --random-batch-size 1), the query about half of the
// prompt as vllm bench serve's random-rerank data set makes it. A sample
// of it has no chunks: its latency is E2EL, and it has neither TTFT nor
// TPOT.
const Rerank Endpoint = "rerank"

// rerankAnswer is the part of a /v1/rerank answer Send checks. vLLM's
// RerankUsage has total_tokens (newer releases add prompt_tokens, the
// same number): a pooling request's tokens are all prompt tokens.
type rerankAnswer struct {
	Results []struct {
		Index          int      `json:"index"`
		RelevanceScore *float64 `json:"relevance_score"`
	} `json:"results"`
	Usage *struct {
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
}

// sendRerank posts req's prompt, split into a query and one document, to
// /v1/rerank and records the answer in s: its latency, usage.total_tokens
// as its prompt tokens, and a failure when the answer is not one scored
// document with usage.
func (c *Client) sendRerank(ctx context.Context, req Request, s *sample.Sample) {
	query, doc, ok := rerankPair(req.completionPrompt())
	if !ok {
		s.Fail(sample.ErrProtocol, 0, "invalid request: a rerank prompt needs at least 2 words, a query and a document: raise --prompt-tokens")
		return
	}
	c.sendUnstreamed(ctx, unstreamedCall{path: "/rerank", name: "rerank",
		body: map[string]any{"model": req.Model, "query": query, "documents": []string{doc}},
		read: c.readRerank}, s)
}

// rerankPair splits a prompt's words into a query, the first half, and a
// document, the rest; false when there are fewer than 2 words.
func rerankPair(prompt string) (query, doc string, ok bool) {
	w := strings.Fields(prompt)
	if len(w) < 2 {
		return "", "", false
	}
	return strings.Join(w[:len(w)/2], " "), strings.Join(w[len(w)/2:], " "), true
}

// readRerank checks a rerank answer and records its usage.
func (c *Client) readRerank(raw []byte, s *sample.Sample) {
	var a rerankAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		s.Fail(sample.ErrProtocol, 0, c.redact(fmt.Sprintf("the rerank answer is not JSON: %v: %q", err, clip(string(raw), 120))))
		return
	}
	switch {
	case len(a.Results) != 1:
		s.Fail(sample.ErrProtocol, 0, fmt.Sprintf("the rerank answer has %d results, want 1 for the 1 document sent", len(a.Results)))
	case a.Results[0].Index != 0 || a.Results[0].RelevanceScore == nil:
		s.Fail(sample.ErrProtocol, 0, c.redact(fmt.Sprintf("the rerank answer's result is not document 0 with a relevance_score: %q", clip(string(raw), 120))))
	case a.Usage == nil:
		s.Fail(sample.ErrProtocol, 0, "the rerank answer has no usage: its prompt tokens are unknown")
	default:
		s.PromptTokens, s.Unstreamed = a.Usage.TotalTokens, true
	}
}
