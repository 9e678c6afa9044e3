package workload

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/fixtures"
	"github.com/vllmperf/vllmperf/internal/request/dataset"
	"github.com/vllmperf/vllmperf/internal/request/openai"
)

func mustSet(t *testing.T, name string, o dataset.Options) *dataset.Set {
	t.Helper()
	f, err := dataset.Open(fixtures.DatasetFS(), name)
	require.NoError(t, err)
	s, err := f.Select(o)
	require.NoError(t, err)
	return s
}

// TestDatasetClass: request j sends entry j mod len with its output length
// as max_tokens, the run's nonce and the pass over the set first; a second
// pass differs from the first only in those words.
func TestDatasetClass(t *testing.T) {
	set := mustSet(t, "prompts.jsonl", dataset.Options{Seed: 3})
	m, err := NewMix("m", 1, 77, []Class{{Name: "data", Weight: 1, Config: Config{IgnoreEOS: true}, Dataset: set}})
	require.NoError(t, err)
	n := len(set.Entries)
	for j := range 2 * n {
		e := set.Entries[j%n]
		req := m.Next(j)
		assert.Equal(t, e.OutputLen, req.MaxTokens, "request %d", j)
		assert.True(t, req.IgnoreEOS)
		assert.Equal(t, e.PromptWords()+UniqueWords, requestWords(req), "request %d: the entry's words and the unique ones", j)
		assert.True(t, strings.HasSuffix(req.Prompt, e.Prompt), "request %d ends with the entry's prompt", j)
		first := req.Prompt
		switch {
		case req.System != "":
			first = req.System
		case len(req.History) > 0:
			first = req.History[0].User
		}
		words := strings.Fields(first)
		if j >= n {
			prev := strings.Fields(firstMessage(m.Next(j - n)))
			assert.Equal(t, prev[:NonceWords], words[:NonceWords], "same run, same nonce")
			assert.NotEqual(t, prev[NonceWords:UniqueWords], words[NonceWords:UniqueWords], "another pass, another tag")
			assert.Equal(t, prev[UniqueWords:], words[UniqueWords:])
		}
	}
	assert.Equal(t, "data", m.ClassOf(3))
}

func firstMessage(req openai.Request) string {
	switch {
	case req.System != "":
		return req.System
	case len(req.History) > 0:
		return req.History[0].User
	}
	return req.Prompt
}

// TestDatasetCapAndLongest: Config.MaxTokens caps the entries' output
// lengths, and Longest finds the entry that needs the most context.
func TestDatasetCapAndLongest(t *testing.T) {
	set := mustSet(t, "sharegpt.json", dataset.Options{Seed: 1})
	m, err := NewMix("m", 1, 5, []Class{{Name: "sg", Weight: 1, Config: Config{MaxTokens: 10}, Dataset: set}})
	require.NoError(t, err)
	for j := range len(set.Entries) {
		assert.LessOrEqual(t, m.Next(j).MaxTokens, 10)
	}
	want := 0
	for _, e := range set.Entries {
		want = max(want, e.PromptWords()+UniqueWords+min(e.OutputLen, 10))
	}
	assert.Equal(t, want, m.Longest().Tokens())
	_, err = NewMix("m", 1, 5, []Class{{Name: "both", Weight: 1, Dataset: set, Chat: &Chat{}}})
	assert.ErrorContains(t, err, "Chat and Dataset exclude each other")
}
