package openai

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// Embeddings is /v1/embeddings: one unstreamed answer per request, as
// vllm bench serve's openai-embeddings backend sends it. A sample of it
// has no chunks: its latency is E2EL, and it has neither TTFT nor TPOT.
const Embeddings Endpoint = "embeddings"

// Endpoints are the endpoints Send speaks.
var Endpoints = []Endpoint{Chat, Completions, Embeddings, Rerank}

// Known reports whether Send speaks e ("" is Chat).
func (e Endpoint) Known() bool {
	for _, k := range Endpoints {
		if e == k || e == "" {
			return true
		}
	}
	return false
}

// sendEmbeddings posts req's prompt to /v1/embeddings and records the
// answer in s: its latency, usage.prompt_tokens, and a failure when the
// answer is not one embedding with usage.
func (c *Client) sendEmbeddings(ctx context.Context, req Request, s *sample.Sample) {
	c.sendUnstreamed(ctx, unstreamedCall{path: "/embeddings", name: "embeddings",
		body: map[string]any{"model": req.Model, "input": req.completionPrompt(), "encoding_format": "float"},
		read: c.readEmbedding}, s)
}

// embeddingAnswer is the part of a /v1/embeddings answer Send checks.
type embeddingAnswer struct {
	Data []struct {
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

// readEmbedding checks an embeddings answer and records its usage.
func (c *Client) readEmbedding(raw []byte, s *sample.Sample) {
	var a embeddingAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		s.Fail(sample.ErrProtocol, 0, c.redact(fmt.Sprintf("the embeddings answer is not JSON: %v: %q", err, clip(string(raw), 120))))
		return
	}
	switch {
	case len(a.Data) != 1 || len(a.Data[0].Embedding) == 0:
		s.Fail(sample.ErrProtocol, 0, fmt.Sprintf("the embeddings answer has %d embeddings, want 1 for the 1 input sent", len(a.Data)))
	case a.Usage == nil:
		s.Fail(sample.ErrProtocol, 0, "the embeddings answer has no usage: its prompt tokens are unknown")
	default:
		s.PromptTokens, s.Unstreamed = a.Usage.PromptTokens, true
	}
}
