package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"
)

// ErrNoTokenize is wrapped by Tokenize's error when the server does not
// serve vLLM's POST /tokenize (404 or 405): lengths then come from the
// usage counts of the responses.
var ErrNoTokenize = errors.New("the server has no /tokenize endpoint")

// tokenizeBody is vLLM's /tokenize request, either form
// (TokenizeCompletionRequest or TokenizeChatRequest in
// vllm/entrypoints/openai/protocol.py).
type tokenizeBody struct {
	Model            string                           `json:"model"`
	Prompt           *string                          `json:"prompt,omitempty"`
	Messages         []goopenai.ChatCompletionMessage `json:"messages,omitempty"`
	AddSpecialTokens bool                             `json:"add_special_tokens"`
	// AddGenerationPrompt is sent with messages only (vLLM's default, true).
	AddGenerationPrompt *bool `json:"add_generation_prompt,omitempty"`
}

// Tokenize asks the server's POST /tokenize how many prompt tokens req
// has as the server counts them: its messages through the chat template
// with the generation prompt (Chat), or its prompt with the special tokens
// (Completions), vLLM's defaults for each form, which are what a
// generation request's prompt_tokens counts.
func (c *Client) Tokenize(ctx context.Context, req Request) (int, error) {
	body := tokenizeBody{Model: req.Model}
	if req.Endpoint == Completions {
		p := req.completionPrompt()
		body.Prompt, body.AddSpecialTokens = &p, true
	} else {
		yes := true
		body.Messages, body.AddGenerationPrompt = req.chatMessages(), &yes
	}
	return c.tokenize(ctx, body)
}

// TokenizeText counts the tokens of text alone: no special tokens, no
// chat template.
func (c *Client) TokenizeText(ctx context.Context, model, text string) (int, error) {
	return c.tokenize(ctx, tokenizeBody{Model: model, Prompt: &text})
}

// maxTokenizeBody bounds how much of a /tokenize answer is read (it lists
// every token id).
const maxTokenizeBody = 64 << 20

func (c *Client) tokenize(ctx context.Context, body tokenizeBody) (int, error) {
	if c.baseErr != nil {
		return 0, fmt.Errorf("tokenize: invalid base URL: %s", c.redact(c.baseErr.Error()))
	}
	url := strings.TrimSuffix(c.baseURL, "/v1") + "/tokenize"
	data, err := json.Marshal(body)
	if err != nil {
		return 0, fmt.Errorf("tokenize: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return 0, fmt.Errorf("tokenize: %s", c.redact(err.Error()))
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("tokenize: %s", c.redact(err.Error()))
	}
	defer func() { _ = resp.Body.Close() }()
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed:
		return 0, fmt.Errorf("tokenize: POST %s answered %s: %w", url, resp.Status, ErrNoTokenize)
	case rejectsKey(resp.StatusCode):
		return 0, fmt.Errorf("tokenize: POST %s answered %s: %w", url, resp.Status, ErrKeyRejected)
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("tokenize: POST %s answered %s%s", url, resp.Status, bodySnippet(resp.Body, c.apiKey))
	}
	var out struct {
		Count *int `json:"count"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxTokenizeBody)).Decode(&out); err != nil || out.Count == nil {
		return 0, fmt.Errorf("tokenize: POST %s is not vLLM's {\"count\", \"max_model_len\", \"tokens\"} (%v)", url, err)
	}
	return *out.Count, nil
}
