package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// TestSendEmbeddings: a good answer is measured whole, and every way a
// server can answer wrong is a failure that says what was wrong.
func TestSendEmbeddings(t *testing.T) {
	t.Parallel()
	good := `{"object":"list","data":[{"index":0,"object":"embedding","embedding":[0.6,0.8]}],"usage":{"prompt_tokens":5,"total_tokens":5}}`
	for _, tc := range []struct {
		name   string
		status int
		body   string
		kind   sample.ErrorKind // "" = success
		msg    string
	}{
		{"one embedding with usage", 200, good, "", ""},
		{"vLLM's refusal of a generative model", 400, `{"error":{"message":"The model does not support Embeddings API","type":"BadRequestError","param":null,"code":400}}`, sample.ErrHTTPStatus, "BadRequestError: The model does not support Embeddings API"},
		{"rate limited", 429, `{"error":{"message":"slow down","type":"RateLimitError"}}`, sample.ErrRateLimited, "slow down"},
		{"a body that is no JSON", 200, `data: {"choices": []}`, sample.ErrProtocol, "not JSON"},
		{"two embeddings for one input", 200, `{"data":[{"embedding":[1]},{"embedding":[1]}],"usage":{"prompt_tokens":5}}`, sample.ErrProtocol, "has 2 embeddings, want 1"},
		{"no usage", 200, `{"data":[{"embedding":[1]}]}`, sample.ErrProtocol, "no usage"},
		{"an error body that is not vLLM's", 500, `upstream exploded`, sample.ErrHTTPStatus, "upstream exploded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got map[string]any
			_, c := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/embeddings" {
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
			c.Send(testCtx(t), Request{Endpoint: Embeddings, Model: "bge", System: "a ", Prompt: "b c"}, &s)
			assert.Equal(t, "bge", got["model"])
			assert.Equal(t, "a b c", got["input"], "the system prefix and the prompt, as a completion's")
			if tc.kind != "" {
				require.NotNil(t, s.Err)
				assert.Equal(t, tc.kind, s.Err.Kind)
				assert.True(t, strings.Contains(s.Err.Message, tc.msg), "message %q, want %q", s.Err.Message, tc.msg)
				return
			}
			require.Nil(t, s.Err)
			assert.True(t, s.Unstreamed)
			assert.Equal(t, 5, s.PromptTokens)
			assert.Empty(t, s.Chunks)
			_, ok := s.TTFT()
			assert.False(t, ok, "no stream, no TTFT")
			e2el, ok := s.E2EL()
			assert.True(t, ok)
			assert.Equal(t, s.Done.Sub(s.Sent), e2el)
			assert.Less(t, e2el, 10*time.Second)
		})
	}
}
