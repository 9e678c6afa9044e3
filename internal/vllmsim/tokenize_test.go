package vllmsim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestTokenize: POST /tokenize answers vLLM's TokenizeResponse for both of
// its request forms, and its count is the prompt_tokens a generation
// request with the same prompt reports.
func TestTokenize(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--max-model-len", "512")
	for _, tc := range []struct {
		name, body, gen, genPath string
		count                    int
	}{
		// The completion form, special tokens asked for (none exist here).
		{"prompt", `{"model":"sim-model","prompt":"the quick  brown\nfox","add_special_tokens":true}`,
			`{"model":"sim-model","prompt":"the quick  brown\nfox","max_tokens":1}`, "/v1/completions", 4},
		// The chat form: every message's words, no template.
		{"messages", `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi there you"}],"add_generation_prompt":true}`,
			`{"model":"sim-model","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi there you"}],"max_tokens":1}`, "/v1/chat/completions", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, b := m.post(t, "/tokenize", tc.body)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, b)
			}
			var resp tokenizeResponse
			if err := json.Unmarshal(b, &resp); err != nil {
				t.Fatal(err)
			}
			if resp.Count != tc.count || len(resp.Tokens) != tc.count || resp.MaxModelLen != 512 {
				t.Errorf("response %s: want count %d, %d tokens, max_model_len 512", b, tc.count, tc.count)
			}
			code, b = m.post(t, tc.genPath, tc.gen)
			var gen struct {
				Usage usage `json:"usage"`
			}
			if err := json.Unmarshal(b, &gen); code != http.StatusOK || err != nil || gen.Usage.PromptTokens != resp.Count {
				t.Errorf("generation: status %d, usage %+v, want prompt_tokens %d (%v)", code, gen.Usage, resp.Count, err)
			}
		})
	}
	code, b := m.post(t, "/tokenize", `{"prompt":"a b c","return_token_strs":true}`)
	if code != http.StatusOK || !strings.Contains(string(b), `"token_strs":["a","b","c"]`) {
		t.Errorf("return_token_strs: %d %s", code, b)
	}
}

// TestTokenizeErrors: bad bodies are vLLM-style errors.
func TestTokenizeErrors(t *testing.T) {
	t.Parallel()
	m := startSim(t)
	for _, tc := range []struct {
		body string
		code int
		want string
	}{
		{`{"prompt":"a","messages":[{"role":"user","content":"b"}]}`, 400, "exactly one of prompt"},
		{`{"model":"sim-model"}`, 400, "exactly one of prompt"},
		{`{"model":"other","prompt":"a"}`, 404, "The model `other` does not exist."},
		{`{"messages":[]}`, 400, "non-empty list"},
		{`not json`, 400, "not valid JSON for /tokenize"},
	} {
		code, b := m.post(t, "/tokenize", tc.body)
		if code != tc.code || !strings.Contains(string(b), tc.want) {
			t.Errorf("%s: %d %s, want %d and %q", tc.body, code, b, tc.code, tc.want)
		}
	}
}
