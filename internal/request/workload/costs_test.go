package workload

import (
	"strings"
	"testing"
)

// TestWordTokens: with the served model's tokens per word, prompts hold
// the declared number of tokens, not words; a word that would overshoot
// gives way to one that fits.
func TestWordTokens(t *testing.T) {
	t.Parallel()
	two := make([]int, len(words))
	mixed := make([]int, len(words))
	for i := range words {
		two[i] = 2
		mixed[i] = 1 + i%3 // 1, 2 or 3 tokens
	}
	for _, tc := range []struct {
		name  string
		costs []int
		words int // the words of a 64-token prompt, when they are fixed
	}{
		{"two tokens a word", two, 32},
		{"one to three tokens a word", mixed, 0},
	} {
		g := mustNew(t, Config{Model: "m", PromptTokens: 64, SharedPrefixTokens: 20, WordTokens: tc.costs, Nonce: 99})
		for i := range 50 {
			req := g.Next(i)
			if got := tokensOf(req.Prompt, tc.costs); got != 64 {
				t.Errorf("%s: request %d has %d tokens, want 64", tc.name, i, got)
			}
			if n := len(strings.Fields(req.Prompt)); tc.words > 0 && n != tc.words {
				t.Errorf("%s: request %d has %d words, want %d", tc.name, i, n, tc.words)
			}
			if got := tokensOf(req.System, tc.costs); got != 20 {
				t.Errorf("%s: system prompt has %d tokens, want 20", tc.name, got)
			}
		}
	}
	if _, err := New(Config{Model: "m", WordTokens: []int{1}}); err == nil || !strings.Contains(err.Error(), "WordTokens has 1 entries") {
		t.Errorf("short WordTokens: err = %v", err)
	}
}

// tokensOf sums the words' tokens.
func tokensOf(text string, costs []int) int {
	n := 0
	for _, w := range strings.Fields(text) {
		n += costs[vocabIndex[w]]
	}
	return n
}
