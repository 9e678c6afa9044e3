// Package openai is the streaming client that measures one request against an
// OpenAI-compatible server (vLLM or anything speaking its API). It is built on
// github.com/sashabaranov/go-openai and adds vLLM's extra request fields.
package openai

// Endpoint selects the OpenAI API a request goes to.
type Endpoint string

// The supported endpoints.
const (
	// Chat is /v1/chat/completions.
	Chat Endpoint = "chat"
	// Completions is /v1/completions.
	Completions Endpoint = "completions"
)

// Request is one benchmark request.
type Request struct {
	// Endpoint is Chat (default when empty) or Completions.
	Endpoint Endpoint
	// Model is the served model name.
	Model string
	// System is an optional system prompt (Chat), or a prefix prepended to
	// Prompt (Completions). A shared System exercises the prefix cache.
	System string
	// Prompt is the user message (Chat) or the prompt text (Completions).
	Prompt string
	// MaxTokens caps the completion length.
	MaxTokens int
	// MinTokens is vLLM's min_tokens (0: not sent).
	MinTokens int
	// IgnoreEOS is vLLM's ignore_eos: generate exactly MaxTokens.
	IgnoreEOS bool
	// Temperature is always sent, 0 included (go-openai drops a zero).
	Temperature float64
}
