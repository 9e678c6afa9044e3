package vllmsim

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
)

// thinkBody is a chat request for 8 tokens, streamed or not, with extra
// fields.
func thinkBody(stream bool, extra string) string {
	s := `{"messages": [{"role": "user", "content": "why is the sky blue"}], "max_tokens": 8, "ignore_eos": true`
	if stream {
		s += `, "stream": true, "stream_options": {"include_usage": true, "continuous_usage_stats": true}`
	}
	return s + extra + "}"
}

// streamParts reads a streamed answer: the words of its thinking and of
// its answer (one a token: the tags show in neither), and the parts in
// the order they came ("r", "a"). Words, not chunks: a slow reader may
// get two steps' tokens in one chunk.
func streamParts(t *testing.T, m *sim, body string) (reasoning, answer int, order []string) {
	t.Helper()
	res := m.stream(t, context.Background(), "/v1/chat/completions", body)
	require.NoError(t, res.err)
	for _, e := range res.events {
		var c struct {
			Choices []struct {
				Delta struct {
					Content          string `json:"content"`
					ReasoningContent string `json:"reasoning_content"`
				} `json:"delta"`
			} `json:"choices"`
		}
		require.NoError(t, json.Unmarshal([]byte(e.data), &c))
		for _, ch := range c.Choices {
			if n := len(splitWords(ch.Delta.ReasoningContent)); n > 0 {
				reasoning += n
				order = append(order, "r")
			}
			if n := len(splitWords(ch.Delta.Content)); n > 0 {
				answer += n
				order = append(order, "a")
			}
		}
	}
	return reasoning, answer, order
}

func TestReasoningStream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		extra string
		r, a  int // thinking and answer words of 8 tokens
	}{
		{"qwen3 writes its tags: <think> t t </think> a a a a", []string{"--reasoning-parser", "qwen3"}, "", 2, 4},
		{"deepseek_r1's template opened the thinking: t t t </think> a a a a", []string{"--reasoning-parser", "deepseek_r1"}, "", 3, 4},
		{"qwen3 without thinking", []string{"--reasoning-parser", "qwen3"}, `, "chat_template_kwargs": {"enable_thinking": false}`, 0, 8},
		{"no parser: all content", nil, "", 0, 8},
		{"all thinking: the answer never starts", []string{"--reasoning-parser", "qwen3", "--sim-reasoning-share", "1"}, "", 6, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := startSim(t, tc.args...)
			r, a, order := streamParts(t, m, thinkBody(true, tc.extra))
			assert.Equal(t, tc.r, r, "thinking words (order %v)", order)
			assert.Equal(t, tc.a, a, "answer words (order %v)", order)
			if i := slices.Index(order, "a"); i >= 0 {
				assert.NotContains(t, order[i:], "r", "thinking after the answer began")
			}
		})
	}
}

func TestReasoningWhole(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--reasoning-parser", "qwen3")
	status, body := m.post(t, "/v1/chat/completions", thinkBody(false, ""))
	require.Equal(t, http.StatusOK, status, string(body))
	var resp struct {
		Choices []struct {
			Message struct {
				Content          string  `json:"content"`
				ReasoningContent *string `json:"reasoning_content"`
			} `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal(body, &resp))
	msg := resp.Choices[0].Message
	require.NotNil(t, msg.ReasoningContent)
	assert.Len(t, splitWords(*msg.ReasoningContent), 2, "two thinking tokens between the tags")
	assert.Len(t, splitWords(msg.Content), 4, "four answer tokens")
}

func TestReasoningFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--reasoning-parser", "granite"}, "argument --reasoning-parser: invalid choice: 'granite' (vllm-sim models deepseek_r1, qwen3)"},
		{[]string{"--sim-reasoning-share", "1.5"}, "argument --sim-reasoning-share: 1.5 is outside [0, 1]"},
	} {
		_, err := config.ParseArgs(tc.args)
		require.Error(t, err)
		assert.Contains(t, err.Error(), tc.want)
	}
}

func splitWords(s string) []string {
	var out []string
	word := ""
	for _, c := range s + " " {
		if c == ' ' {
			if word != "" {
				out = append(out, word)
			}
			word = ""
			continue
		}
		word += string(c)
	}
	return out
}

func init() {
	parityCases["reasoning-parser"] = []parityValue{v("qwen3", true, func(o *config.Options) { o.ReasoningParser = "qwen3" }),
		v("deepseek_r1", true, func(o *config.Options) { o.ReasoningParser = "deepseek_r1" }), v("granite", false, func(o *config.Options) { o.ReasoningParser = "granite" })}
	parityCases["sim-reasoning-share"] = []parityValue{v("0.25", true, func(o *config.Options) { o.ReasoningShare = 0.25 }),
		v("-0.1", false, func(o *config.Options) { o.ReasoningShare = -0.1 }), syntax("half")}
}
