package tokenizer

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"
)

// The simulator's tokenizer is deliberately trivial so that a load generator
// can build prompts of an exact length without a real tokenizer:
//
//   - Text is split on Unicode white space (strings.Fields); every word is one
//     token. "The quick  brown\nfox" is 4 tokens; the empty string is 0.
//   - A word's token id is FNV-1a-32(word) mod the served model's vocabulary
//     size (its preset's presets.ModelPreset.Vocab), so every id is one the
//     engine accepts, equal words get equal ids and a shared prefix of words
//     is a shared prefix of tokens (what the prefix cache keys on).
//   - A chat request's prompt is its messages' contents in order, each
//     tokenized on its own and concatenated: no chat template, no role tokens,
//     no special tokens. Prompt tokens = Σ words over all message contents.
//   - An output token id maps to a word of a fixed word list (Word); the text
//     streamed for a token is " " + Word(id). Re-tokenizing a completion's text
//     therefore gives exactly its completion_tokens, less one when it stopped
//     on EOS (finish_reason "stop"): the EOS token is counted but, as in vLLM,
//     not rendered.

// Tokenizer is the tokenizer of one model's vocabulary: every id it returns
// lies in [0, Vocab()). A Server tokenizes with its served model's
// (engine.Info.VocabSize). Build one with NewTokenizer: the zero Tokenizer
// has no vocabulary.
type Tokenizer struct {
	vocab uint32
}

// NewTokenizer returns the tokenizer of a vocabulary of vocab ids (a model
// preset's presets.ModelPreset.Vocab). It panics unless 0 < vocab < 2^31: a
// vocabulary comes from a preset, so any other size is a programming error.
func NewTokenizer(vocab int) Tokenizer {
	if vocab <= 0 || vocab > math.MaxInt32 {
		panic(fmt.Sprintf("vllmsim: vocabulary size %d outside (0, 2^31)", vocab))
	}
	return Tokenizer{vocab: uint32(vocab)}
}

// Vocab is the vocabulary's size.
func (t Tokenizer) Vocab() int { return int(t.vocab) }

// Tokenize returns the token ids of text: one id per white-space separated
// word, id = TokenID(word).
func (t Tokenizer) Tokenize(text string) []int32 {
	words := strings.Fields(text)
	ids := make([]int32, len(words))
	for i, w := range words {
		ids[i] = t.TokenID(w)
	}
	return ids
}

// TokenID returns the token id of one word: FNV-1a-32(word) mod Vocab().
func (t Tokenizer) TokenID(word string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(word)) // hash.Hash.Write never fails
	return int32(h.Sum32() % t.vocab)
}

// CountTokens returns how many tokens Tokenize(text) would return, whatever
// the vocabulary, without allocating them.
func CountTokens(text string) int { return len(strings.Fields(text)) }

// Word returns the text of output token id: a word from a fixed list of
// outputWords, chosen by id modulo the list's length. Negative ids map as
// their absolute value.
func Word(id int32) string {
	i := int64(id)
	if i < 0 {
		i = -i
	}
	return outputWords[i%int64(len(outputWords))]
}

// Detokenize renders output tokens as the simulator streams them: " word" per
// token.
func Detokenize(ids []int32) string {
	var b strings.Builder
	for _, id := range ids {
		b.WriteByte(' ')
		b.WriteString(Word(id))
	}
	return b.String()
}

// outputWords is the fixed vocabulary of generated text. Each entry is one
// word without white space, so every emitted token re-tokenizes to exactly
// one token.
var outputWords = [...]string{
	"the", "of", "and", "to", "in", "is", "that", "for", "it", "as",
	"was", "with", "be", "by", "on", "not", "he", "this", "are", "or",
	"his", "from", "at", "which", "but", "have", "an", "had", "they", "you",
	"were", "their", "one", "all", "we", "can", "her", "has", "there", "been",
	"if", "more", "when", "will", "would", "who", "so", "no", "model", "token",
	"cache", "batch", "prefill", "decode", "latency", "throughput", "request", "server", "memory", "block",
	"kernel", "tensor", "stream", "queue", "metric", "sample", "engine", "attention", "layer", "weight",
	"vector", "matrix", "graph", "signal", "system", "network", "value", "result", "answer", "question",
	"time", "people", "year", "way", "day", "thing", "world", "life", "hand", "part",
	"place", "case", "point", "number", "group", "problem", "fact", "work", "week", "end",
	"good", "new", "first", "last", "long", "great", "little", "own", "other", "old",
	"right", "big", "high", "different", "small", "large", "next", "early", "young", "important",
	"few", "public", "bad", "same", "able", "quick", "brown", "fox", "jumps", "over",
}

// WordAt is the output word at index i of the word list, modulo its
// length: structured output draws its strings' words with it.
func WordAt(i uint64) string { return outputWords[i%uint64(len(outputWords))] }
