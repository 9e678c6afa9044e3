package vllmsim

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRerankAndScore(t *testing.T) {
	t.Parallel()
	m := startSimRaw(t, "BAAI/bge-small-en-v1.5", "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "1ms", "--disable-log-stats")
	status, body := m.post(t, "/v1/rerank", `{"query": "blue sky", "documents": ["the sky is blue", "blue sky", "grass"], "top_n": 2}`)
	require.Equal(t, http.StatusOK, status, string(body))
	var rr struct {
		Usage struct {
			TotalTokens int `json:"total_tokens"`
		} `json:"usage"`
		Results []struct {
			Index          int               `json:"index"`
			Document       map[string]string `json:"document"`
			RelevanceScore float64           `json:"relevance_score"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(body, &rr))
	assert.Equal(t, 2+4+2+1, rr.Usage.TotalTokens, "the query and every document, embedded once each")
	require.Len(t, rr.Results, 2, "top_n")
	assert.Equal(t, 1, rr.Results[0].Index, "the document equal to the query ranks first")
	assert.InDelta(t, 1, rr.Results[0].RelevanceScore, 1e-6)
	assert.Equal(t, "blue sky", rr.Results[0].Document["text"])
	assert.GreaterOrEqual(t, rr.Results[0].RelevanceScore, rr.Results[1].RelevanceScore)

	status, body = m.post(t, "/score", `{"text_1": "blue sky", "text_2": ["blue sky", "grass"]}`)
	require.Equal(t, http.StatusOK, status, string(body))
	var sr struct {
		Data []struct {
			Index int     `json:"index"`
			Score float64 `json:"score"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	require.NoError(t, json.Unmarshal(body, &sr))
	require.Len(t, sr.Data, 2)
	assert.InDelta(t, 1, sr.Data[0].Score, 1e-6)
	assert.Equal(t, 5, sr.Usage.PromptTokens)

	for _, tc := range []struct {
		m      *sim
		path   string
		body   string
		status int
		msg    string
	}{
		{m, "/rerank", `{"query": "q", "documents": []}`, 400, "documents must be a non-empty list"},
		{m, "/score", `{"text_1": ["a", "b"], "text_2": ["c", "d", "e"]}`, 400, "text_1 has 2 texts and text_2 3"},
		{m, "/rerank", `{"model": "nope", "query": "q", "documents": ["d"]}`, 404, "The model `nope` does not exist."},
		{startSim(t), "/rerank", `{"query": "q", "documents": ["d"]}`, 400, "The model does not support Score API"},
	} {
		status, body := tc.m.post(t, tc.path, tc.body)
		assert.Equal(t, tc.status, status, string(body))
		assert.Contains(t, string(body), tc.msg)
	}
}
