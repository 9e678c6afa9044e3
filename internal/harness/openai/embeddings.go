package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/vllmperf/vllmperf/internal/harness/sample"
)

// Embeddings is /v1/embeddings: one unstreamed answer per request, as
// vllm bench serve's openai-embeddings backend sends it. A sample of it
// has no chunks: its latency is E2EL, and it has neither TTFT nor TPOT.
const Embeddings Endpoint = "embeddings"

// Endpoints are the endpoints Send speaks.
var Endpoints = []Endpoint{Chat, Completions, Embeddings}

// Known reports whether Send speaks e ("" is Chat).
func (e Endpoint) Known() bool {
	for _, k := range Endpoints {
		if e == k || e == "" {
			return true
		}
	}
	return false
}

// maxEmbeddingBody bounds how much of an embeddings answer is read.
const maxEmbeddingBody = 16 << 20

// embeddingAnswer is the part of a /v1/embeddings answer Send checks.
type embeddingAnswer struct {
	Data []struct {
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage *struct {
		PromptTokens int `json:"prompt_tokens"`
	} `json:"usage"`
}

// sendEmbeddings posts req's prompt to /v1/embeddings and records the
// answer in s: its latency (Sent to Done), usage.prompt_tokens, and a
// failure when the answer is not one embedding with usage.
func (c *Client) sendEmbeddings(ctx context.Context, req Request, s *sample.Sample) {
	body, err := json.Marshal(map[string]any{"model": req.Model, "input": req.completionPrompt(), "encoding_format": "float"})
	if err != nil {
		s.Fail(sample.ErrProtocol, 0, "encode the embeddings request: "+err.Error())
		return
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if c.requestTimeout > 0 {
		var cancelT context.CancelFunc
		rctx, cancelT = context.WithTimeoutCause(rctx, c.requestTimeout, errRequestTimeout)
		defer cancelT()
	}
	hr, err := http.NewRequestWithContext(rctx, http.MethodPost, c.baseURL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		s.Fail(sample.ErrProtocol, 0, c.redact("build the embeddings request: "+err.Error()))
		return
	}
	hr.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		hr.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	s.Sent = time.Now()
	resp, err := c.httpClient.Do(hr)
	if err != nil {
		c.fail(s, ctx, rctx, err, true)
		return
	}
	defer func() { _ = resp.Body.Close() }()
	s.Header = time.Now()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxEmbeddingBody+1))
	s.Done = time.Now()
	switch {
	case err != nil:
		c.fail(s, ctx, rctx, err, true)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		s.Fail(statusKind(resp.StatusCode), resp.StatusCode, c.redact(fmt.Sprintf("%s: %s", resp.Status, errorMessage(raw))))
	case len(raw) > maxEmbeddingBody:
		s.Fail(sample.ErrProtocol, 0, fmt.Sprintf("the embeddings answer is larger than %s", formatBytes(maxEmbeddingBody)))
	default:
		c.readEmbedding(raw, s)
	}
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

// errorMessage is an error body's message: vLLM's {"error": {"type",
// "message"}}, else the start of the body.
func errorMessage(raw []byte) string {
	var e struct {
		Error struct{ Type, Message string } `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
		return e.Error.Type + ": " + e.Error.Message
	}
	return clip(string(bytes.TrimSpace(raw)), maxErrorBody)
}
