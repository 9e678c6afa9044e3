// Package openai is the streaming client that measures one request against an
// OpenAI-compatible server (vLLM or anything speaking its API). It is built on
// github.com/sashabaranov/go-openai and adds vLLM's extra request fields.
package openai

import (
	"strings"

	"github.com/vllmperf/vllmperf/internal/request/schema"

	goopenai "github.com/sashabaranov/go-openai"
)

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
	// History holds earlier turns of a multi-turn chat, sent between
	// System and Prompt (Chat), or concatenated in order (Completions).
	History []Turn
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
	// KeepText keeps the generated text in Sample.Text.
	KeepText bool
	// Schema, when set, asks for structured output (Chat only): sent as
	// response_format {"type": "json_schema"}, or, with Tool set, as the
	// parameters of the one tool the model must call (tool_choice naming
	// it). The output (the tool call's arguments) must parse against it:
	// Send fails one that does not with sample.ErrSchema. It implies
	// KeepText.
	Schema *schema.Schema
	// Tool names the function of a forced tool call (with Schema).
	Tool string
	// Images are data: URLs sent as image_url parts after the prompt's
	// text (Chat only: images.go).
	Images []string
}

// Turn is one earlier exchange of a multi-turn chat.
type Turn struct {
	User, Assistant string
}

// chatMessages renders the request as chat messages: system, the history's
// user/assistant pairs, then the prompt.
func (r *Request) chatMessages() []goopenai.ChatCompletionMessage {
	msgs := make([]goopenai.ChatCompletionMessage, 0, 2+2*len(r.History))
	if r.System != "" {
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: r.System})
	}
	for _, t := range r.History {
		msgs = append(msgs,
			goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: t.User},
			goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleAssistant, Content: t.Assistant})
	}
	return append(msgs, r.userMessage())
}

// completionPrompt renders the request as one completion prompt: System
// (which carries its own separator, as a prefix does), then each turn's
// user and assistant text and Prompt, space-separated.
func (r *Request) completionPrompt() string {
	if len(r.History) == 0 {
		return r.System + r.Prompt
	}
	parts := make([]string, 0, 1+2*len(r.History))
	for _, t := range r.History {
		parts = append(parts, t.User, t.Assistant)
	}
	return r.System + strings.Join(append(parts, r.Prompt), " ")
}
