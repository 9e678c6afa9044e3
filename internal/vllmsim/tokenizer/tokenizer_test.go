package tokenizer

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// TestTokenizer: one token per white-space separated word, whatever the
// vocabulary, and every id inside the served model's vocabulary for every
// model preset.
func TestTokenizer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		want int
	}{
		// Empty text has no tokens.
		{"empty", "", 0},
		// Runs of white space of any kind separate words.
		{"spaces", "  the quick\tbrown\n\nfox ", 4},
		// Punctuation sticks to its word.
		{"punctuation", "Hello, world!", 2},
	}
	for _, model := range presets.ModelPresetNames() {
		m, _ := presets.LookupModel(model)
		tok := NewTokenizer(m.Vocab)
		if tok.Vocab() != m.Vocab {
			t.Errorf("%s: Vocab() = %d, want the preset's %d", model, tok.Vocab(), m.Vocab)
		}
		for _, tt := range tests {
			ids := tok.Tokenize(tt.text)
			if got := len(ids); got != tt.want || CountTokens(tt.text) != tt.want {
				t.Errorf("%s, %s: Tokenize(%q) has %d tokens, CountTokens %d; want %d", model, tt.name, tt.text, got, CountTokens(tt.text), tt.want)
			}
			for _, id := range ids {
				if id < 0 || int(id) >= m.Vocab {
					t.Errorf("%s, %s: id %d outside [0, %d)", model, tt.name, id, m.Vocab)
				}
			}
		}
		// FNV-1a-32("a") = 0xe40c292c, reduced mod the vocabulary: pinned so
		// that the ids (and with them prefix-cache hits) cannot drift
		// unnoticed.
		if got, want := tok.TokenID("a"), int32(0xe40c292c%uint32(m.Vocab)); got != want {
			t.Errorf("%s: TokenID(\"a\") = %d, want %d", model, got, want)
		}
		if tok.TokenID("cache") != tok.TokenID("cache") || tok.TokenID("cache") == tok.TokenID("Cache") {
			t.Errorf("%s: TokenID must be deterministic and case-sensitive", model)
		}
	}
	ids := []int32{0, 1, 151935, -7}
	if got := CountTokens(Detokenize(ids)); got != len(ids) {
		t.Errorf("Detokenize(%v) re-tokenizes to %d tokens, want %d", ids, got, len(ids))
	}
	for _, w := range outputWords {
		if CountTokens(w) != 1 {
			t.Errorf("output word %q is not one token", w)
		}
	}
}

// TestWorkloadWordsAreDistinctTokens: the load generator's 256 words are,
// for every model preset, one token each and 256 different ids, as each is
// its own token in Qwen's and Llama 3's real tokenizers (README): two words
// on one id would let prompts that differ share a prefix-cache block.
func TestWorkloadWordsAreDistinctTokens(t *testing.T) {
	t.Parallel()
	words := workload.Vocabulary()
	for _, model := range presets.ModelPresetNames() {
		m, _ := presets.LookupModel(model)
		if m.Pooling {
			continue // an encoder runs without the prefix cache (engine.PoolingConfig)
		}
		tok := NewTokenizer(m.Vocab)
		seen := map[int32]string{}
		for _, w := range words {
			ids := tok.Tokenize(w)
			if len(ids) != 1 {
				t.Errorf("%s: workload word %q is %d tokens, want 1", model, w, len(ids))
				continue
			}
			if other, dup := seen[ids[0]]; dup {
				t.Errorf("%s: workload words %q and %q are both token %d", model, other, w, ids[0])
			}
			seen[ids[0]] = w
		}
	}
}

// TestNewTokenizerRefusesBadSizes: a vocabulary comes from a preset; a size
// that cannot be one is a programming error.
func TestNewTokenizerRefusesBadSizes(t *testing.T) {
	t.Parallel()
	for _, vocab := range []int{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewTokenizer(%d) did not panic", vocab)
				}
			}()
			NewTokenizer(vocab)
		}()
	}
}
