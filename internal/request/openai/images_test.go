package openai

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// A request with images sends its prompt as a text part followed by an
// image_url part per image; the completions endpoint takes none.
func TestSendImages(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	_, c := newServer(t, rec.wrap(fixtureHandler(t, "chat_vllm.sse")))
	var s sample.Sample
	c.Send(testCtx(t), Request{Model: "m", Prompt: "what is it", Images: []string{"data:image/jpeg;base64,AAA", "data:image/jpeg;base64,BBB"}}, &s)
	require.Nil(t, s.Err)
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type     string `json:"type"`
				Text     string `json:"text"`
				ImageURL struct {
					URL string `json:"url"`
				} `json:"image_url"`
			} `json:"content"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(rec.last(t).body, &body))
	require.Len(t, body.Messages, 1)
	parts := body.Messages[0].Content
	require.Len(t, parts, 3)
	assert.Equal(t, "text", parts[0].Type)
	assert.Equal(t, "what is it", parts[0].Text)
	assert.Equal(t, "image_url", parts[1].Type)
	assert.Equal(t, "data:image/jpeg;base64,BBB", parts[2].ImageURL.URL)

	var s2 sample.Sample
	c.Send(testCtx(t), Request{Endpoint: Completions, Model: "m", Prompt: "x", Images: []string{"data:image/jpeg;base64,AAA"}}, &s2)
	require.NotNil(t, s2.Err)
	assert.Equal(t, sample.ErrProtocol, s2.Err.Kind)
	assert.Contains(t, s2.Err.Message, "images go to the chat endpoint")
}
