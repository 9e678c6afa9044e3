package vllmsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/tokenizer"
)

// streamOptions is OpenAI's stream_options plus vLLM's continuous_usage_stats.
type streamOptions struct {
	IncludeUsage         bool `json:"include_usage"`
	ContinuousUsageStats bool `json:"continuous_usage_stats"`
}

// samplingParams are the request fields shared by both endpoints. Fields the
// simulator does not model (top_p, top_k, stop, seed, ...) are accepted and
// ignored, as vLLM ignores unknown fields.
type samplingParams struct {
	Model               string         `json:"model"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options"`
	MaxTokens           *int           `json:"max_tokens"`
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	MinTokens           *int           `json:"min_tokens"`
	IgnoreEOS           bool           `json:"ignore_eos"`
	Temperature         *float64       `json:"temperature"`
	N                   *int           `json:"n"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type chatRequest struct {
	samplingParams
	guidedFields
	thinkingFields
	Messages []chatMessage `json:"messages"`
}

type completionRequest struct {
	samplingParams
	Prompt json.RawMessage `json:"prompt"`
}

// genKind is the endpoint of a generation request.
type genKind int

const (
	kindChat genKind = iota
	kindCompletion
)

// genRequest is a validated, tokenized request.
type genRequest struct {
	kind      genKind
	model     string // the served name it asked for
	prompt    []int32
	maxTokens int // 0: absent (vLLM's default: what the context leaves)
	minTokens int
	ignoreEOS bool
	greedy    bool // temperature 0: engine.Request.Greedy
	stream    bool
	usage     bool    // stream_options.include_usage
	contUsage bool    // stream_options.continuous_usage_stats
	guided    *guided // structured output (guided.go); nil: free text
	thinkOff  bool    // chat_template_kwargs.enable_thinking false (reasoning.go)
}

// parseFunc reads one endpoint's request body against the served model
// names (the first is the default), tokenizing text with tok (the served
// model's vocabulary).
type parseFunc func(body []byte, served []string, tok tokenizer.Tokenizer) (genRequest, *apiError)

// parseChat reads a /v1/chat/completions body: the prompt is the messages'
// contents, each tokenized on its own, in order.
func parseChat(body []byte, served []string, tok tokenizer.Tokenizer) (genRequest, *apiError) {
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return genRequest{}, badRequest("", "request body is not valid JSON for this endpoint: %v", err)
	}
	prompt, aerr := chatPrompt(req.Messages, tok)
	if aerr != nil {
		return genRequest{}, aerr
	}
	g, aerr := sampling(kindChat, req.samplingParams, prompt, served)
	if aerr != nil {
		return g, aerr
	}
	g.guided, aerr = parseGuided(req.guidedFields, string(body))
	g.thinkOff = req.thinkOff()
	return g, aerr
}

// chatPrompt tokenizes chat messages: their contents, each on its own, in
// order (no chat template).
func chatPrompt(messages []chatMessage, tok tokenizer.Tokenizer) ([]int32, *apiError) {
	texts, aerr := chatTexts(messages)
	var prompt []int32
	for _, text := range texts {
		prompt = append(prompt, tok.Tokenize(text)...)
	}
	return prompt, aerr
}

// chatTexts is the text of each message, in order.
func chatTexts(messages []chatMessage) ([]string, *apiError) {
	if len(messages) == 0 {
		return nil, badRequest("messages", "messages must be a non-empty list of {\"role\": ..., \"content\": ...} objects.")
	}
	texts := make([]string, len(messages))
	for i, m := range messages {
		text, err := messageText(m.Content)
		if err != nil {
			return nil, badRequest("messages", "messages[%d].content: %v", i, err)
		}
		texts[i] = text
	}
	return texts, nil
}

// parseCompletion reads a /v1/completions body.
func parseCompletion(body []byte, served []string, tok tokenizer.Tokenizer) (genRequest, *apiError) {
	var req completionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return genRequest{}, badRequest("", "request body is not valid JSON for this endpoint: %v", err)
	}
	prompt, aerr := completionPrompt(req.Prompt, tok)
	if aerr != nil {
		return genRequest{}, aerr
	}
	return sampling(kindCompletion, req.samplingParams, prompt, served)
}

// sampling checks the sampling parameters both endpoints share. The
// engine checks the rest (engine.Core.Check): the context length and
// min_tokens; max_tokens it checks here only for the value the client gave,
// which the engine's Request cannot tell from an absent one.
func sampling(kind genKind, p samplingParams, prompt []int32, served []string) (genRequest, *apiError) {
	g := genRequest{kind: kind, model: p.Model, prompt: prompt, stream: p.Stream, ignoreEOS: p.IgnoreEOS}
	if g.model == "" {
		g.model = served[0]
	} else if !slices.Contains(served, g.model) {
		return g, newAPIError(http.StatusNotFound, "NotFoundError", "model", fmt.Sprintf("The model `%s` does not exist.", p.Model))
	}
	if p.N != nil && *p.N != 1 {
		return g, badRequest("n", "n must be 1 in vllm-sim, got %d.", *p.N)
	}
	if p.Temperature != nil && *p.Temperature < 0 {
		return g, badRequest("temperature", "temperature must be non-negative, got %g.", *p.Temperature)
	}
	g.greedy = p.Temperature != nil && *p.Temperature == 0
	if p.StreamOptions != nil && !p.Stream {
		return g, badRequest("stream_options", "Stream options can only be defined when `stream=True`.")
	}
	if p.StreamOptions != nil {
		g.usage, g.contUsage = p.StreamOptions.IncludeUsage, p.StreamOptions.ContinuousUsageStats
	}
	maxTok := p.MaxTokens
	if p.MaxCompletionTokens != nil {
		maxTok = p.MaxCompletionTokens
	}
	if maxTok != nil {
		if err := engine.CheckMaxTokens(*maxTok); err != nil {
			e, param := engineError(err), "max_tokens"
			e.Param = &param
			return g, e
		}
		g.maxTokens = *maxTok
	}
	if p.MinTokens != nil {
		g.minTokens = *p.MinTokens
	}
	return g, nil
}

// engineRequest is the request as the engine takes it.
func (g genRequest) engineRequest(id string) engine.Request {
	r := engine.Request{ID: id, PromptTokens: g.prompt, MaxTokens: g.maxTokens, MinTokens: g.minTokens, IgnoreEOS: g.ignoreEOS, Greedy: g.greedy,
		Chat: g.kind == kindChat}
	if g.guided != nil {
		r.Guided, r.StopAfter, r.IgnoreEOS = true, len(g.guided.pieces), false
	}
	return r
}

// messageText returns a message's text: a string, null, or a list of
// content parts of which the "text" parts count.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or a list of {\"type\": \"text\", \"text\": ...} parts")
	}
	texts := make([]string, 0, len(parts))
	for j, p := range parts {
		if p.Type == "image_url" {
			continue // images.go reads them
		}
		if p.Type != "text" {
			return "", fmt.Errorf("part %d has type %q: vllm-sim takes \"text\" and \"image_url\" parts", j, p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, " "), nil
}

// completionPrompt accepts a string, a list of token ids, or a one-element
// list of either; text is tokenized with tok.
func completionPrompt(raw json.RawMessage, tok tokenizer.Tokenizer) ([]int32, *apiError) {
	bad := func(format string, a ...any) *apiError { return badRequest("prompt", "prompt: "+format, a...) }
	if len(raw) == 0 || string(raw) == "null" {
		return nil, bad("missing: give a string or a list of token ids")
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return tok.Tokenize(text), nil
	}
	var ids []int64
	if err := json.Unmarshal(raw, &ids); err == nil {
		return tokenIDs(ids, tok.Vocab())
	}
	var texts []string
	if err := json.Unmarshal(raw, &texts); err == nil {
		if len(texts) != 1 {
			return nil, bad("got %d prompts: vllm-sim takes one prompt per request", len(texts))
		}
		return tok.Tokenize(texts[0]), nil
	}
	var idLists [][]int64
	if err := json.Unmarshal(raw, &idLists); err == nil {
		if len(idLists) != 1 {
			return nil, bad("got %d prompts: vllm-sim takes one prompt per request", len(idLists))
		}
		return tokenIDs(idLists[0], tok.Vocab())
	}
	return nil, bad("want a string, a list of token ids, or a one-element list of either")
}

// tokenIDs converts a prompt's token ids for the engine, which checks them
// against the served model's vocabulary (engine.Core.Check, after the
// length checks, in vLLM's order). An id no int32 holds is outside every
// vocabulary: it gets the engine's answer here.
func tokenIDs(ids []int64, vocab int) ([]int32, *apiError) {
	out := make([]int32, len(ids))
	for i, id := range ids {
		if id < math.MinInt32 || id > math.MaxInt32 {
			return nil, engineError(engine.OutOfVocabulary(id, vocab))
		}
		out[i] = int32(id)
	}
	return out, nil
}
