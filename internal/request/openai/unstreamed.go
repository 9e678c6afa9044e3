package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// Unstreamed reports whether e is answered whole, as a pooling model
// answers (Embeddings, Rerank): its samples have no chunks, so E2EL but
// neither TTFT nor TPOT, and their prompt tokens are the server's
// vllm:prompt_tokens_total.
func (e Endpoint) Unstreamed() bool {
	return e == Embeddings || e == Rerank
}

// maxUnstreamedBody bounds how much of an unstreamed answer is read.
const maxUnstreamedBody = 16 << 20

// unstreamedCall is one POST whose answer comes whole: the path under
// the base URL, the name its messages use, the body, and how the answer
// is checked and recorded in the sample.
type unstreamedCall struct {
	path, name string
	body       any
	read       func(raw []byte, s *sample.Sample)
}

// sendUnstreamed posts u's body and records the answer in s: its latency
// (Sent to Done), then u.read's checks; a non-2xx answer fails with the
// server's message.
func (c *Client) sendUnstreamed(ctx context.Context, u unstreamedCall, s *sample.Sample) {
	body, err := json.Marshal(u.body)
	if err != nil {
		s.Fail(sample.ErrProtocol, 0, "encode the "+u.name+" request: "+err.Error())
		return
	}
	rctx, cancel := c.requestContext(ctx)
	defer cancel(nil)
	hr, err := http.NewRequestWithContext(rctx, http.MethodPost, c.baseURL+u.path, bytes.NewReader(body))
	if err != nil {
		s.Fail(sample.ErrProtocol, 0, c.redact("build the "+u.name+" request: "+err.Error()))
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
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxUnstreamedBody+1))
	s.Done = time.Now()
	switch {
	case err != nil:
		c.fail(s, ctx, rctx, err, true)
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		s.Fail(statusKind(resp.StatusCode), resp.StatusCode, c.redact(fmt.Sprintf("%s: %s%s", resp.Status, errorMessage(raw), unsupportedHint(raw, u.name))))
	case len(raw) > maxUnstreamedBody:
		s.Fail(sample.ErrProtocol, 0, fmt.Sprintf("the %s answer is larger than %s", u.name, formatBytes(maxUnstreamedBody)))
	default:
		u.read(raw, s)
	}
}

// unsupportedHint is what the client adds to vLLM's refusal of a pooling
// API on a model that does not serve it ("The model does not support …
// API"): the model is generative, and the fix.
func unsupportedHint(raw []byte, name string) string {
	if !strings.Contains(string(raw), "does not support") {
		return ""
	}
	return fmt.Sprintf(" (the server's model does not serve %s: serve a pooling model, e.g. vllm serve MODEL --runner pooling, or call a generative model with --endpoint chat or completions)", name)
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
