package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// ErrKeyRejected is wrapped by the errors of Models, MaxModelLen and
// Preconnect when the server answers 401 or 403. Requests refused that way
// fail with sample.ErrAuth. KeyAdvice says what to do about either.
var ErrKeyRejected = errors.New("the server rejected the API key")

// KeyAdvice is the message for a server that refused the client's
// credentials (ErrKeyRejected, or samples failed with sample.ErrAuth).
// source names where the key came from, such as "$VLLM_API_KEY"; "" means
// no key was sent.
func KeyAdvice(source string) string {
	if source == "" {
		return "the server requires an API key and none was sent: pass the key the server was started with (vLLM --api-key)"
	}
	return "the server rejected the key from " + source + ": it must hold the key the server was started with (vLLM --api-key)"
}

// ModelInfo is one model a server lists at GET /v1/models.
type ModelInfo struct {
	// ID is the served model name, as requests name it.
	ID string
	// MaxModelLen is the model's context length in tokens, prompt and
	// completion together, as vLLM reports it (max_model_len); 0 when the
	// server does not report one.
	MaxModelLen int
}

// maxModelsBody bounds how much of a /v1/models answer is read.
const maxModelsBody = 4 << 20

// Models lists the models the server serves (GET /v1/models), in the
// server's order. A refused key is an error wrapping ErrKeyRejected.
func (c *Client) Models(ctx context.Context) ([]ModelInfo, error) {
	if c.baseErr != nil {
		return nil, fmt.Errorf("models: invalid base URL: %s", c.redact(c.baseErr.Error()))
	}
	url := c.baseURL + "/models"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("models: %s", c.redact(err.Error()))
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("models: %s", c.redact(err.Error()))
	}
	defer func() { _ = resp.Body.Close() }()
	if err := modelsStatus(resp, url, c.apiKey); err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			ID          string `json:"id"`
			MaxModelLen *int   `json:"max_model_len"`
		} `json:"data"`
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxModelsBody+1))
	if err != nil {
		return nil, fmt.Errorf("models: read GET %s: %s", url, c.redact(err.Error()))
	}
	if len(body) > maxModelsBody {
		return nil, fmt.Errorf("models: GET %s answered more than %s", url, formatBytes(maxModelsBody))
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("models: GET %s is not an OpenAI model list: %v%s", url, err, bodySnippet(bytes.NewReader(body), c.apiKey))
	}
	out := make([]ModelInfo, 0, len(list.Data))
	for _, m := range list.Data {
		info := ModelInfo{ID: m.ID}
		if m.MaxModelLen != nil && *m.MaxModelLen > 0 {
			info.MaxModelLen = *m.MaxModelLen
		}
		out = append(out, info)
	}
	return out, nil
}

// modelsStatus turns a non-200 answer to GET /v1/models into an error.
func modelsStatus(resp *http.Response, url, apiKey string) error {
	switch {
	case resp.StatusCode == http.StatusOK:
		return nil
	case rejectsKey(resp.StatusCode):
		return fmt.Errorf("models: GET %s answered %s: %w", url, resp.Status, ErrKeyRejected)
	}
	return fmt.Errorf("models: GET %s answered %s%s", url, resp.Status, bodySnippet(resp.Body, apiKey))
}

// MaxModelLen returns the context length the server reports for model
// (vLLM's max_model_len on its /v1/models entry); ok is false when the
// server reports none. It fails when the list cannot be read or does not
// name model.
func (c *Client) MaxModelLen(ctx context.Context, model string) (n int, ok bool, err error) {
	models, err := c.Models(ctx)
	if err != nil {
		return 0, false, err
	}
	ids := make([]string, 0, len(models))
	for _, m := range models {
		if m.ID == model {
			return m.MaxModelLen, m.MaxModelLen > 0, nil
		}
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return 0, false, fmt.Errorf("models: the server does not serve %q (it serves %s)", model, quoteList(ids))
}

// quoteList renders names for a message, "none" when empty.
func quoteList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
