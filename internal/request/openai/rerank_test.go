package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// TestSendRerank: a query and one document go to /v1/rerank as vllm bench
// serve's vllm-rerank backend sends them; a good answer is measured whole,
// and every way a server can answer wrong is a failure that says what was
// wrong.
func TestSendRerank(t *testing.T) {
	t.Parallel()
	good := `{"id":"rerank-1","model":"bge","usage":{"total_tokens":7},"results":[{"index":0,"document":{"text":"c d"},"relevance_score":0.5}]}`
	for _, tc := range []struct {
		name   string
		status int
		body   string
		kind   sample.ErrorKind // "" = success
		msg    string
	}{
		{"one scored document with usage", 200, good, "", ""},
		{"vLLM's refusal of a generative model", 400, `{"error":{"message":"The model does not support Score API","type":"BadRequestError","param":null,"code":400}}`, sample.ErrHTTPStatus, "BadRequestError: The model does not support Score API (the server's model does not serve rerank: serve a pooling model"},
		{"an unknown model", 404, `{"error":{"message":"The model ` + "`x`" + ` does not exist.","type":"NotFoundError","code":404}}`, sample.ErrHTTPStatus, "does not exist"},
		{"rate limited", 429, `{"error":{"message":"slow down","type":"RateLimitError"}}`, sample.ErrRateLimited, "slow down"},
		{"a body that is no JSON", 200, `<html>gateway</html>`, sample.ErrProtocol, "the rerank answer is not JSON"},
		{"no results", 200, `{"results":[],"usage":{"total_tokens":7}}`, sample.ErrProtocol, "has 0 results, want 1"},
		{"a result without a score", 200, `{"results":[{"index":0}],"usage":{"total_tokens":7}}`, sample.ErrProtocol, "with a relevance_score"},
		{"no usage", 200, `{"results":[{"index":0,"relevance_score":0.5}]}`, sample.ErrProtocol, "no usage"},
		{"an error body that is not vLLM's", 502, `upstream exploded`, sample.ErrHTTPStatus, "upstream exploded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got map[string]any
			_, c := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/rerank" {
					http.NotFound(w, r)
					return
				}
				b, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(b, &got)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			var s sample.Sample
			c.Send(testCtx(t), Request{Endpoint: Rerank, Model: "bge", System: "a ", Prompt: "b c d"}, &s)
			assert.Equal(t, "bge", got["model"])
			assert.Equal(t, "a b", got["query"], "the first half of the prompt's words")
			assert.Equal(t, []any{"c d"}, got["documents"], "the rest, one document")
			if tc.kind != "" {
				require.NotNil(t, s.Err)
				assert.Equal(t, tc.kind, s.Err.Kind)
				assert.True(t, strings.Contains(s.Err.Message, tc.msg), "message %q, want %q", s.Err.Message, tc.msg)
				return
			}
			require.Nil(t, s.Err)
			assert.True(t, s.Unstreamed)
			assert.Equal(t, 7, s.PromptTokens, "usage.total_tokens")
			assert.Empty(t, s.Chunks)
			_, ok := s.TTFT()
			assert.False(t, ok, "no stream, no TTFT")
			e2el, ok := s.E2EL()
			assert.True(t, ok)
			assert.Equal(t, s.Done.Sub(s.Sent), e2el)
		})
	}
}

// TestSendRerankOneWord: a prompt with no document to split off fails
// before anything is sent, naming the fix.
func TestSendRerankOneWord(t *testing.T) {
	t.Parallel()
	sent := false
	_, c := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent = true }))
	var s sample.Sample
	c.Send(testCtx(t), Request{Endpoint: Rerank, Model: "bge", Prompt: "alone"}, &s)
	require.NotNil(t, s.Err)
	assert.Equal(t, sample.ErrProtocol, s.Err.Kind)
	assert.Contains(t, s.Err.Message, "raise --prompt-tokens")
	assert.False(t, sent)
}
