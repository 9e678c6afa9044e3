package vllmsim

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
)

// embedResponse is a /v1/embeddings answer.
type embedResponse struct {
	Object string `json:"object"`
	Data   []struct {
		Index     int             `json:"index"`
		Object    string          `json:"object"`
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int `json:"prompt_tokens"`
		TotalTokens  int `json:"total_tokens"`
	} `json:"usage"`
	Error *apiError `json:"error"`
}

func TestEmbeddings(t *testing.T) {
	t.Parallel()
	m := startSimRaw(t, "BAAI/bge-small-en-v1.5", "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "1ms", "--disable-log-stats")
	for _, tc := range []struct {
		name   string
		body   string
		n      int // vectors
		dims   int
		tokens int
		base64 bool
	}{
		{"one string, the hidden size", `{"input": "the sky is blue"}`, 1, 384, 4, false},
		{"a batch of strings", `{"input": ["the sky", "is blue today"]}`, 2, 384, 5, false},
		{"token ids, fewer dimensions", `{"input": [1, 2, 3], "dimensions": 8}`, 1, 8, 3, false},
		{"base64", `{"input": "a b", "encoding_format": "base64", "dimensions": 4}`, 1, 4, 2, true},
	} {
		status, body := m.post(t, "/v1/embeddings", tc.body)
		require.Equal(t, http.StatusOK, status, "%s: %s", tc.name, body)
		var r embedResponse
		require.NoError(t, json.Unmarshal(body, &r))
		require.Len(t, r.Data, tc.n, tc.name)
		assert.Equal(t, tc.tokens, r.Usage.PromptTokens, tc.name)
		for i, d := range r.Data {
			assert.Equal(t, i, d.Index)
			assert.Equal(t, "embedding", d.Object)
			if tc.base64 {
				var s string
				require.NoError(t, json.Unmarshal(d.Embedding, &s))
				b, err := base64.StdEncoding.DecodeString(s)
				require.NoError(t, err)
				assert.Len(t, b, 4*tc.dims, tc.name)
				continue
			}
			var v []float64
			require.NoError(t, json.Unmarshal(d.Embedding, &v))
			assert.Len(t, v, tc.dims, tc.name)
		}
	}
	mfs := m.scrape(t)
	assert.Equal(t, 14.0, sum(mfs, "vllm:prompt_tokens_total"), "every input's tokens are counted")
	assert.Zero(t, sum(mfs, "vllm:generation_tokens_total"), "a pooling request generates nothing")
	assert.Equal(t, 5.0, sum(mfs, "vllm:request_success_total", "finished_reason", "stop"))
}

func TestEmbeddingErrors(t *testing.T) {
	t.Parallel()
	pooling := startSimRaw(t, "BAAI/bge-small-en-v1.5", "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "1ms", "--disable-log-stats")
	generative := startSim(t)
	long := `{"input": "` + strings.Repeat("w ", 600) + `"}`
	for _, tc := range []struct {
		name   string
		m      *sim
		path   string
		body   string
		status int
		msg    string
	}{
		{"a generative model has no embeddings", generative, "/v1/embeddings", `{"input": "x"}`, 400, "The model does not support Embeddings API"},
		{"a pooling model has no chat", pooling, "/v1/chat/completions", `{"messages": [{"role": "user", "content": "x"}], "stream": true}`, 400, "The model does not support Chat Completions API"},
		{"nor completions", pooling, "/v1/completions", `{"prompt": "x"}`, 400, "The model does not support Completions API"},
		{"an input over the context", pooling, "/v1/embeddings", long, 400, "This model's maximum context length is 512 tokens. However, you requested 600 tokens in the input for embedding generation."},
		{"an id past the vocabulary", pooling, "/v1/embeddings", `{"input": [0, 30522]}`, 400, "Token id 30522 is out of vocabulary (vocab size 30522)"},
		{"an unknown model", pooling, "/v1/embeddings", `{"model": "nope", "input": "x"}`, 404, "The model `nope` does not exist."},
		{"no input", pooling, "/v1/embeddings", `{"input": []}`, 400, "input: want a string"},
		{"too many dimensions", pooling, "/v1/embeddings", `{"input": "x", "dimensions": 1000}`, 400, "dimensions must be from 1 to the model's 384"},
	} {
		status, body := tc.m.post(t, tc.path, tc.body)
		assert.Equal(t, tc.status, status, "%s: %s", tc.name, body)
		var r embedResponse
		require.NoError(t, json.Unmarshal(body, &r), tc.name)
		require.NotNil(t, r.Error, tc.name)
		assert.Contains(t, r.Error.Message, tc.msg, tc.name)
	}
}

func init() {
	parityCases["runner"] = []parityValue{v("pooling", true, func(o *config.Options) { o.Runner = "pooling" }), v("generate", true, func(o *config.Options) { o.Runner = "generate" }),
		v("draft", false, func(o *config.Options) { o.Runner = "draft" })}
	parityCases["task"] = []parityValue{v("embed", true, func(o *config.Options) { o.Task = "embed" }), v("generate", true, func(o *config.Options) { o.Task = "generate" }),
		v("paint", false, func(o *config.Options) { o.Task = "paint" })}
}
