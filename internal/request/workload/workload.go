// Package workload builds the synthetic requests of a benchmark run.
//
// A prompt of N tokens is N words drawn from a fixed list of 256 common
// lowercase English words (see words.go), joined by single spaces. vLLM's
// simulator counts one token per whitespace-separated word, and the
// cl100k-derived tokenizers of Qwen and Llama 3 give one token per such word
// with its leading space, so the prompt length in words is the prompt length
// in tokens up to the few tokens a chat template adds.
//
// Every prompt starts with a per-run nonce followed by the request's index,
// both spelled as words, so no two requests of a run share a prefix and a
// re-run against the same server does not hit the prefix cache (a pitfall the
// vLLM docs warn about). An optional shared system prompt of K words, the
// same for every request of the run, exercises the prefix cache on purpose.
//
// Word choice is deterministic from Config.Seed and the request index: Next(i)
// is a pure function of the Config, safe for concurrent use.
package workload

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"strings"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/schema"
)

// NonceWords is how many words of a prompt spell the run's nonce, and
// IndexWords how many spell the request index, one byte per word. They are
// the first words of every prompt, so PromptTokens must be at least
// UniqueWords. Indices repeat after 2^(8·IndexWords) = 16,777,216 requests.
const (
	NonceWords  = 3
	IndexWords  = 3
	UniqueWords = NonceWords + IndexWords
)

// Defaults applied by New to zero Config fields.
const (
	// DefaultEndpoint is the chat completions API.
	DefaultEndpoint = openai.Chat
	// DefaultPromptTokens matches vLLM's random dataset default input length.
	DefaultPromptTokens = 1024
	// DefaultMaxTokens matches vLLM's random dataset default output length.
	DefaultMaxTokens = 128
)

// Config describes the requests of a run. The zero value of a field selects
// its Default, except Model, which is required.
type Config struct {
	// Endpoint is openai.Chat or openai.Completions (DefaultEndpoint when empty).
	Endpoint openai.Endpoint
	// Model is the served model name (required).
	Model string
	// PromptTokens is the length of each request's own prompt in words
	// (DefaultPromptTokens when 0), at least UniqueWords. The shared prefix
	// comes on top of it, as vLLM's --random-prefix-len does.
	PromptTokens int
	// MaxTokens caps each completion (DefaultMaxTokens when 0).
	MaxTokens int
	// MinTokens is vLLM's min_tokens (0: not sent).
	MinTokens int
	// IgnoreEOS makes the server generate exactly MaxTokens tokens, so
	// output lengths do not depend on the model's text.
	IgnoreEOS bool
	// Temperature is sent as is, 0 (greedy) included.
	Temperature float64
	// SharedPrefixTokens is the length in words of a system prompt shared by
	// every request of the run (0: none). It starts with the run's nonce, so
	// it is shared within a run but not across runs; it must be 0 or at least
	// NonceWords.
	SharedPrefixTokens int
	// Body, when set, is the fixed text every prompt carries after its
	// unique words, instead of random words (a fixture's prompt). Its word
	// count plus UniqueWords is the prompt length; PromptTokens must then
	// be 0 (it is filled in) or equal to that.
	Body string
	// SystemText, when set, is the fixed text of the shared system prompt
	// after the run's nonce, instead of random words (a fixture's system
	// prompt). SharedPrefixTokens must then be 0 (it is filled in) or
	// equal to NonceWords plus its word count.
	SystemText string
	// WordTokens, when set, is how many tokens each vocabulary word (in
	// Vocabulary's order) adds on the served model after a space (see
	// harness's /tokenize probe): random words are then drawn until their
	// tokens, the unique words' included, sum to PromptTokens (and
	// SharedPrefixTokens), instead of one word a token. nil: one each.
	WordTokens []int
	// Schema, when set, asks for structured output (openai.Request.Schema):
	// a JSON document, or with Tool the arguments of a forced call of the
	// tool so named.
	Schema *schema.Schema
	Tool   string
	// MM, when set, adds images to every request (mm.go; Chat only).
	MM *MM
	// Seed makes word choice reproducible.
	Seed uint64
	// Nonce distinguishes this run's prompts from every other run's. Zero
	// draws a random one (see Generator.Nonce to record it); set it to
	// replay a run's exact prompts. Only its low 8·NonceWords bits are used.
	Nonce uint64
}

// Generator produces a run's requests. Build one with New.
type Generator struct {
	cfg    Config
	nonce  uint64
	system string
	pool   *imagePool // Config.MM's images (mm.go)
}

// New validates cfg, applies defaults and returns a Generator.
func New(cfg Config) (*Generator, error) {
	if cfg.Endpoint == "" {
		cfg.Endpoint = DefaultEndpoint
	}
	var errs []error
	if cfg.Body != "" {
		n := UniqueWords + len(strings.Fields(cfg.Body))
		if cfg.PromptTokens != 0 && cfg.PromptTokens != n {
			errs = append(errs, fmt.Errorf("PromptTokens = %d but Body makes prompts of %d words (%d unique + %d of Body): leave PromptTokens 0 with a Body", cfg.PromptTokens, n, UniqueWords, n-UniqueWords))
		}
		cfg.PromptTokens = n
	}
	if cfg.SystemText != "" {
		n := NonceWords + len(strings.Fields(cfg.SystemText))
		if cfg.SharedPrefixTokens != 0 && cfg.SharedPrefixTokens != n {
			errs = append(errs, fmt.Errorf("SharedPrefixTokens = %d but SystemText makes a system prompt of %d words: leave SharedPrefixTokens 0 with a SystemText", cfg.SharedPrefixTokens, n))
		}
		cfg.SharedPrefixTokens = n
	}
	if cfg.PromptTokens == 0 {
		cfg.PromptTokens = DefaultPromptTokens
	}
	if cfg.MaxTokens == 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	if !cfg.Endpoint.Known() {
		errs = append(errs, fmt.Errorf("Endpoint %q is unknown: use one of %q", cfg.Endpoint, openai.Endpoints))
	}
	if strings.TrimSpace(cfg.Model) == "" {
		errs = append(errs, errors.New("Model is empty: set the served model name"))
	}
	if cfg.PromptTokens < UniqueWords {
		errs = append(errs, fmt.Errorf("PromptTokens = %d: must be at least %d, the words that make each prompt unique", cfg.PromptTokens, UniqueWords))
	}
	if cfg.MaxTokens < 0 {
		errs = append(errs, fmt.Errorf("MaxTokens = %d: must be positive (0 selects %d)", cfg.MaxTokens, DefaultMaxTokens))
	}
	if cfg.MinTokens < 0 {
		errs = append(errs, fmt.Errorf("MinTokens = %d: must be 0 (not sent) or positive", cfg.MinTokens))
	}
	if cfg.MaxTokens > 0 && cfg.MinTokens > cfg.MaxTokens {
		errs = append(errs, fmt.Errorf("MinTokens = %d exceeds MaxTokens = %d: lower MinTokens", cfg.MinTokens, cfg.MaxTokens))
	}
	if math.IsNaN(cfg.Temperature) || math.IsInf(cfg.Temperature, 0) || cfg.Temperature < 0 {
		errs = append(errs, fmt.Errorf("Temperature = %v: must be a finite number ≥ 0", cfg.Temperature))
	}
	if cfg.WordTokens != nil && len(cfg.WordTokens) != len(words) {
		errs = append(errs, fmt.Errorf("WordTokens has %d entries: want one per vocabulary word (%d)", len(cfg.WordTokens), len(words)))
	}
	if cfg.MM != nil {
		if err := cfg.MM.check(); err != nil {
			errs = append(errs, err)
		}
		if cfg.Endpoint != openai.Chat {
			errs = append(errs, fmt.Errorf("MM: images go to the chat endpoint, not %q", cfg.Endpoint))
		}
	}
	if cfg.SharedPrefixTokens < 0 || (cfg.SharedPrefixTokens > 0 && cfg.SharedPrefixTokens < NonceWords) {
		errs = append(errs, fmt.Errorf("SharedPrefixTokens = %d: must be 0 (no shared prefix) or at least %d", cfg.SharedPrefixTokens, NonceWords))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	g := &Generator{cfg: cfg, nonce: cfg.Nonce}
	if cfg.MM != nil {
		g.pool = newImagePool(len(cfg.MM.Buckets), cfg.Seed)
	}
	if g.nonce == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
		g.nonce = binary.LittleEndian.Uint64(b[:]) | 1
	}
	if cfg.SharedPrefixTokens > 0 {
		var sb strings.Builder
		g.appendBytes(&sb, g.nonce, NonceWords)
		if cfg.SystemText != "" {
			g.appendText(&sb, cfg.SystemText)
		} else {
			g.appendRandom(&sb, mrand.New(mrand.NewPCG(cfg.Seed, math.MaxUint64)), cfg.SharedPrefixTokens-g.bytesCost(g.nonce, NonceWords))
		}
		g.system = sb.String()
	}
	return g, nil
}

// Nonce returns the run's nonce; Config.Nonce set to it replays the prompts.
func (g *Generator) Nonce() uint64 { return g.nonce }

// Config returns the configuration with defaults applied.
func (g *Generator) Config() Config { return g.cfg }

// Next returns request i: NonceWords words of nonce, IndexWords words of i,
// then PromptTokens − UniqueWords words drawn from the seed and i. The
// shared system prompt, if any, is the same for every i. Negative i are
// taken modulo 2^(8·IndexWords) like the others.
func (g *Generator) Next(i int) openai.Request {
	var sb strings.Builder
	sb.Grow(g.cfg.PromptTokens * 6)
	g.appendBytes(&sb, g.nonce, NonceWords)
	g.appendBytes(&sb, uint64(i), IndexWords)
	if g.cfg.Body != "" {
		g.appendText(&sb, g.cfg.Body)
	} else {
		g.appendRandom(&sb, mrand.New(mrand.NewPCG(g.cfg.Seed, uint64(i))), g.cfg.PromptTokens-g.bytesCost(g.nonce, NonceWords)-g.bytesCost(uint64(i), IndexWords))
	}
	r := g.request(sb.String())
	if g.cfg.MM != nil {
		r.Images = g.cfg.MM.images(g.pool, g.cfg.Seed, i)
	}
	return r
}

// request wraps a prompt in the run's request fields.
func (g *Generator) request(prompt string) openai.Request {
	return openai.Request{
		Endpoint:    g.cfg.Endpoint,
		Model:       g.cfg.Model,
		System:      g.system,
		Prompt:      prompt,
		MaxTokens:   g.cfg.MaxTokens,
		MinTokens:   g.cfg.MinTokens,
		IgnoreEOS:   g.cfg.IgnoreEOS,
		Temperature: g.cfg.Temperature,
		Schema:      g.cfg.Schema,
		Tool:        g.cfg.Tool,
	}
}

// appendBytes spells the low n bytes of v as n words, least significant first.
func (g *Generator) appendBytes(sb *strings.Builder, v uint64, n int) {
	for k := 0; k < n; k++ {
		g.appendWord(sb, words[byte(v>>(8*k))])
	}
}

// appendRandom appends words drawn uniformly from the list until their
// tokens (one each without WordTokens) sum to n. A drawn word that would
// overshoot gives way to the next word of the list that fits; when none
// fits, the prompt stops short.
func (g *Generator) appendRandom(sb *strings.Builder, r *mrand.Rand, n int) {
	for n > 0 {
		w := r.IntN(len(words))
		for k := 0; k < len(words) && g.cost(w) > n; k++ {
			w = (w + 1) % len(words)
		}
		if g.cost(w) > n {
			return
		}
		g.appendWord(sb, words[w])
		n -= g.cost(w)
	}
}

// cost is the tokens word w adds (at least 1).
func (g *Generator) cost(w int) int {
	if g.cfg.WordTokens == nil {
		return 1
	}
	return max(1, g.cfg.WordTokens[w])
}

// bytesCost is the tokens of the n words that spell v (appendBytes).
func (g *Generator) bytesCost(v uint64, n int) int {
	sum := 0
	for k := 0; k < n; k++ {
		sum += g.cost(int(byte(v >> (8 * k))))
	}
	return sum
}

// appendText appends fixed text, normalising its whitespace to single spaces.
func (g *Generator) appendText(sb *strings.Builder, text string) {
	for _, w := range strings.Fields(text) {
		g.appendWord(sb, w)
	}
}

func (g *Generator) appendWord(sb *strings.Builder, w string) {
	if sb.Len() > 0 {
		sb.WriteByte(' ')
	}
	sb.WriteString(w)
}
