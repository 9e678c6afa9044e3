package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/request/openai"
)

func mustNew(t *testing.T, cfg Config) *Generator {
	t.Helper()
	g, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return g
}

// TestWordsFixed guards the vocabulary: prompts are part of the benchmark's
// definition and must not change by accident.
func TestWordsFixed(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, w := range words {
		if w == "" || strings.ToLower(w) != w || strings.ContainsAny(w, " \t\n") {
			t.Errorf("word %q is not a single lowercase word", w)
		}
		if seen[w] {
			t.Errorf("word %q appears twice", w)
		}
		seen[w] = true
	}
	sum := sha256.Sum256([]byte(strings.Join(words[:], " ")))
	got := hex.EncodeToString(sum[:])
	const want = "ecf4894b621f0e9a15fb382e37ef68d7dea4845dd27a2e997255d531b11d87a1"
	if got != want {
		t.Errorf("word list changed: sha256 = %s, want %s (update the constant only if the change is deliberate)", got, want)
	}
}

func TestPromptLengthAndVocabulary(t *testing.T) {
	t.Parallel()
	vocab := map[string]bool{}
	for _, w := range words {
		vocab[w] = true
	}
	for _, n := range []int{UniqueWords, 7, 128, 1024} {
		g := mustNew(t, Config{Model: "m", PromptTokens: n, Seed: 1, Nonce: 42})
		for i := range 20 {
			f := strings.Fields(g.Next(i).Prompt)
			if len(f) != n {
				t.Fatalf("PromptTokens=%d: Next(%d) has %d words", n, i, len(f))
			}
			for _, w := range f {
				if !vocab[w] {
					t.Fatalf("word %q is not in the list", w)
				}
			}
		}
	}
}

func TestPromptsUniqueAtStart(t *testing.T) {
	t.Parallel()
	g := mustNew(t, Config{Model: "m", PromptTokens: 64, Nonce: 7})
	seen := map[string]int{}
	for i := range 5000 {
		head := strings.Join(strings.Fields(g.Next(i).Prompt)[:UniqueWords], " ")
		if j, ok := seen[head]; ok {
			t.Fatalf("requests %d and %d start with the same %d words %q", j, i, UniqueWords, head)
		}
		seen[head] = i
	}
}

func TestDeterminism(t *testing.T) {
	t.Parallel()
	base := Config{Model: "m", PromptTokens: 32, SharedPrefixTokens: 16, Seed: 3, Nonce: 99}
	a, b := mustNew(t, base), mustNew(t, base)
	for i := range 10 {
		if got, want := a.Next(i), b.Next(i); !reflect.DeepEqual(got, want) {
			t.Fatalf("same Config, Next(%d) differs:\n%+v\n%+v", i, got, want)
		}
	}
	// A different nonce changes the first words of every prompt and of the system prompt.
	other := base
	other.Nonce = 100
	c := mustNew(t, other)
	if a.Next(0).Prompt == c.Next(0).Prompt || a.Next(0).System == c.Next(0).System {
		t.Error("a different Nonce left the prompts unchanged")
	}
	// A different seed changes the body but not the unique head.
	reseeded := base
	reseeded.Seed = 4
	d := mustNew(t, reseeded)
	pa, pd := strings.Fields(a.Next(5).Prompt), strings.Fields(d.Next(5).Prompt)
	if strings.Join(pa[:UniqueWords], " ") != strings.Join(pd[:UniqueWords], " ") {
		t.Error("the seed changed the nonce/index words")
	}
	if strings.Join(pa[UniqueWords:], " ") == strings.Join(pd[UniqueWords:], " ") {
		t.Error("a different Seed left the prompt body unchanged")
	}
}

func TestRandomNonce(t *testing.T) {
	t.Parallel()
	a := mustNew(t, Config{Model: "m"})
	b := mustNew(t, Config{Model: "m"})
	if a.Nonce() == 0 || b.Nonce() == 0 {
		t.Fatal("a drawn nonce is zero")
	}
	if a.Next(0).Prompt == b.Next(0).Prompt {
		t.Error("two runs with drawn nonces produced the same first prompt")
	}
	// Replaying the recorded nonce reproduces the prompts.
	c := mustNew(t, Config{Model: "m", Nonce: a.Nonce()})
	if !reflect.DeepEqual(a.Next(3), c.Next(3)) {
		t.Error("replaying Nonce() did not reproduce the prompt")
	}
}

func TestSharedPrefix(t *testing.T) {
	t.Parallel()
	g := mustNew(t, Config{Model: "m", PromptTokens: 16, SharedPrefixTokens: 40, Nonce: 5})
	sys := g.Next(0).System
	if n := len(strings.Fields(sys)); n != 40 {
		t.Fatalf("system prompt has %d words, want 40", n)
	}
	for i := 1; i < 50; i++ {
		if got := g.Next(i).System; got != sys {
			t.Fatalf("Next(%d).System differs from Next(0).System", i)
		}
	}
	// The shared prefix starts with the same nonce words as the prompts.
	if got, want := strings.Fields(sys)[:NonceWords], strings.Fields(g.Next(0).Prompt)[:NonceWords]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("system prompt starts %q, prompts start %q", got, want)
	}
	if g := mustNew(t, Config{Model: "m"}); g.Next(0).System != "" {
		t.Error("SharedPrefixTokens=0 produced a system prompt")
	}
}

func TestRequestFields(t *testing.T) {
	t.Parallel()
	g := mustNew(t, Config{Model: "qwen", Endpoint: openai.Completions, MaxTokens: 64, MinTokens: 64, IgnoreEOS: true, Temperature: 0.5})
	r := g.Next(1)
	if r.Model != "qwen" || r.Endpoint != openai.Completions || r.MaxTokens != 64 || r.MinTokens != 64 || !r.IgnoreEOS || r.Temperature != 0.5 {
		t.Errorf("request fields not carried over: %+v", r)
	}
	d := mustNew(t, Config{Model: "m"}).Config()
	if d.Endpoint != DefaultEndpoint || d.PromptTokens != DefaultPromptTokens || d.MaxTokens != DefaultMaxTokens {
		t.Errorf("defaults not applied: %+v", d)
	}
	// Negative indices do not panic and stay unique-looking words.
	if n := len(strings.Fields(g.Next(-1).Prompt)); n != DefaultPromptTokens {
		t.Errorf("Next(-1) has %d words", n)
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error
	}{
		// The model name is required.
		{"no model", Config{}, "Model is empty"},
		// An endpoint outside the two supported ones.
		{"bad endpoint", Config{Model: "m", Endpoint: "score"}, `Endpoint "score" is unknown`},
		// Too short to hold the nonce and index words.
		{"prompt too short", Config{Model: "m", PromptTokens: 5}, "PromptTokens = 5"},
		// Negative lengths.
		{"negative prompt", Config{Model: "m", PromptTokens: -1}, "PromptTokens = -1"},
		{"negative max tokens", Config{Model: "m", MaxTokens: -3}, "MaxTokens = -3"},
		{"negative min tokens", Config{Model: "m", MinTokens: -1}, "MinTokens = -1"},
		// min_tokens above max_tokens would make vLLM reject every request.
		{"min above max", Config{Model: "m", MaxTokens: 10, MinTokens: 11}, "MinTokens = 11 exceeds MaxTokens = 10"},
		// A shared prefix too short for the nonce, and a negative one.
		{"prefix too short", Config{Model: "m", SharedPrefixTokens: 2}, "SharedPrefixTokens = 2"},
		{"negative prefix", Config{Model: "m", SharedPrefixTokens: -4}, "SharedPrefixTokens = -4"},
		// Non-finite temperature.
		{"NaN temperature", Config{Model: "m", Temperature: math.NaN()}, "Temperature = NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New(%+v) error = %v, want it to contain %q", tt.cfg, err, tt.want)
			}
		})
	}
}

// TestMixLongest: the request of a mix that needs the most context, in
// words (one token each) plus its max_tokens.
func TestMixLongest(t *testing.T) {
	chat := &Chat{System: "be brief please", Conversations: 3, Turns: []openai.Turn{
		{User: "one two", Assistant: "three four five"},
		{User: "six", Assistant: "seven eight"},
		{User: "nine ten eleven", Assistant: "twelve"},
	}}
	tests := []struct {
		name    string
		classes []Class
		want    Longest
	}{
		// A plain class: its prompt length, max_tokens on top.
		{"plain", []Class{{Name: "a", Weight: 1, Config: Config{PromptTokens: 100, MaxTokens: 20}}}, Longest{Class: "a", PromptWords: 100, MaxTokens: 20}},
		// A shared system prompt comes on top of the prompt.
		{"shared prefix", []Class{{Name: "a", Weight: 1, Config: Config{PromptTokens: 100, MaxTokens: 20, SharedPrefixTokens: 50}}}, Longest{Class: "a", PromptWords: 150, MaxTokens: 20}},
		// Of two classes the one needing more context, output included.
		{"two classes", []Class{
			{Name: "short", Weight: 7, Config: Config{PromptTokens: 40, MaxTokens: 500}},
			{Name: "long", Weight: 1, Config: Config{PromptTokens: 500, MaxTokens: 20}},
		}, Longest{Class: "short", PromptWords: 40, MaxTokens: 500}},
		// A chat's last turn resends the system prompt (nonce + text), the
		// conversation's tag and every earlier exchange.
		{"chat", []Class{{Name: "c", Weight: 1, Config: Config{MaxTokens: 8}, Chat: chat}},
			Longest{Class: "c", PromptWords: NonceWords + 3 + IndexWords + (2 + 3) + (1 + 2) + 3, MaxTokens: 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := NewMix("m", 1, 0, tc.classes)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Longest(); got != tc.want {
				t.Errorf("Longest() = %+v, want %+v", got, tc.want)
			}
		})
	}
}
