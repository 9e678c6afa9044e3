package vllmsim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vllmsim/tokenizer"
)

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestChatStreamShape(t *testing.T) {
	t.Parallel()
	m := startSim(t)
	res := m.stream(t, context.Background(), "/v1/chat/completions", readFixture(t, "chat_stream.json"))
	if res.err != nil || res.status != http.StatusOK {
		t.Fatalf("stream: status %d, err %v", res.status, res.err)
	}
	if !res.done {
		t.Fatal("stream did not end with data: [DONE]")
	}
	chunks := decodeChunks(t, res.events)
	if len(chunks) < 3 {
		t.Fatalf("got %d chunks, want role + content + usage", len(chunks))
	}
	first := chunks[0]
	if first.Object != "chat.completion.chunk" || first.Model != "sim-model" || !strings.HasPrefix(first.ID, "chatcmpl-") {
		t.Errorf("first chunk header = %+v", first)
	}
	if d := first.Choices[0].Delta; d == nil || d.Role == nil || *d.Role != "assistant" || d.Content == nil || *d.Content != "" {
		t.Errorf("first chunk %s: want only role assistant with content \"\"", res.events[0].data)
	}
	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage == nil {
		t.Fatalf("last chunk %s: want empty choices and usage", res.events[len(res.events)-1].data)
	}
	var text strings.Builder
	finish := ""
	for i, c := range chunks[1 : len(chunks)-1] {
		if c.Usage != nil {
			t.Errorf("content chunk %d carries usage without continuous_usage_stats", i+1)
		}
		text.WriteString(c.text())
		if fr := c.Choices[0].FinishReason; fr != nil {
			finish = *fr
		}
	}
	if got, want := last.Usage.PromptTokens, 12; got != want {
		t.Errorf("prompt_tokens = %d, want %d (5 system + 7 user words)", got, want)
	}
	if got, want := last.Usage.CompletionTokens, 12; got != want {
		t.Errorf("completion_tokens = %d, want %d (max_tokens with ignore_eos)", got, want)
	}
	if last.Usage.TotalTokens != last.Usage.PromptTokens+last.Usage.CompletionTokens || last.Usage.PromptTokensDetails == nil {
		t.Errorf("usage = %+v: total must be the sum, prompt_tokens_details present", *last.Usage)
	}
	if got := tokenizer.CountTokens(text.String()); got != last.Usage.CompletionTokens {
		t.Errorf("streamed text re-tokenizes to %d tokens, usage says %d", got, last.Usage.CompletionTokens)
	}
	if finish != "length" {
		t.Errorf("finish_reason = %q, want length", finish)
	}
}

func TestCompletionStreamContinuousUsage(t *testing.T) {
	t.Parallel()
	m := startSim(t)
	body := `{"model":"sim-model","prompt":"one two three four","max_tokens":7,"ignore_eos":true,"stream":true,
		"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`
	res := m.stream(t, context.Background(), "/v1/completions", body)
	if res.err != nil || !res.done {
		t.Fatalf("stream: err %v, done %v", res.err, res.done)
	}
	chunks := decodeChunks(t, res.events)
	prev := 0
	for i, c := range chunks {
		if c.Usage == nil {
			t.Fatalf("chunk %d has no usage under continuous_usage_stats", i)
		}
		if c.Object != "text_completion" {
			t.Errorf("chunk %d object %q, want text_completion", i, c.Object)
		}
		if len(c.Choices) == 0 {
			continue
		}
		delta := c.Usage.CompletionTokens - prev
		if got := tokenizer.CountTokens(c.text()); got != delta {
			t.Errorf("chunk %d: %d tokens of text, usage grew by %d", i, got, delta)
		}
		prev = c.Usage.CompletionTokens
	}
	if final := chunks[len(chunks)-1].Usage; final.CompletionTokens != 7 || final.PromptTokens != 4 {
		t.Errorf("final usage %+v, want 4 prompt and 7 completion tokens", *final)
	}
}

func TestNonStreamed(t *testing.T) {
	t.Parallel()
	m := startSim(t)
	tests := []struct {
		name, path, body, object string
		prompt, completion       int
	}{
		// The fixture: min_tokens = max_tokens fixes the length.
		{"completion", "/v1/completions", readFixture(t, "completion.json"), "text_completion", 9, 9},
		// Chat with max_completion_tokens (OpenAI's newer name).
		{"chat", "/v1/chat/completions", `{"model":"sim-model","messages":[{"role":"user","content":"hi there"}],"max_completion_tokens":5,"ignore_eos":true}`, "chat.completion", 2, 5},
		// Token ids as the prompt.
		{"token ids", "/v1/completions", `{"prompt":[1,2,3],"max_tokens":3,"ignore_eos":true}`, "text_completion", 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, b := m.post(t, tt.path, tt.body)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, b)
			}
			var resp struct {
				Object  string `json:"object"`
				Model   string `json:"model"`
				Choices []struct {
					Text    string `json:"text"`
					Message struct {
						Role    string `json:"role"`
						Content string `json:"content"`
					} `json:"message"`
					FinishReason string `json:"finish_reason"`
				} `json:"choices"`
				Usage usage `json:"usage"`
			}
			if err := json.Unmarshal(b, &resp); err != nil {
				t.Fatal(err)
			}
			if resp.Object != tt.object || resp.Model != "sim-model" || len(resp.Choices) != 1 {
				t.Fatalf("response %s", b)
			}
			text := resp.Choices[0].Text + resp.Choices[0].Message.Content
			if resp.Usage.PromptTokens != tt.prompt || resp.Usage.CompletionTokens != tt.completion || tokenizer.CountTokens(text) != tt.completion {
				t.Errorf("usage %+v, text %q: want %d prompt, %d completion tokens", resp.Usage, text, tt.prompt, tt.completion)
			}
			if resp.Choices[0].FinishReason != "length" {
				t.Errorf("finish_reason %q, want length", resp.Choices[0].FinishReason)
			}
		})
	}
}

func TestRequestErrors(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--max-model-len", "32")
	long := strings.Repeat("word ", 40)
	tests := []struct {
		name, path, body string
		status           int
		typ, message     string // message: a substring
	}{
		// vLLM's wording for an unknown model.
		{"unknown model", "/v1/chat/completions", `{"model":"gpt-4","messages":[{"role":"user","content":"x"}]}`, 404, "NotFoundError", "The model `gpt-4` does not exist."},
		// A prompt longer than --max-model-len: the engine's message, 400.
		{"too long", "/v1/completions", `{"prompt":"` + long + `","max_tokens":4}`, 400, "BadRequestError", "32"},
		// n > 1 is not simulated.
		{"n=2", "/v1/completions", `{"prompt":"a","n":2}`, 400, "BadRequestError", "n must be 1"},
		// max_tokens must be positive.
		{"max_tokens 0", "/v1/completions", `{"prompt":"a","max_tokens":0}`, 400, "BadRequestError", "max_tokens must be at least 1"},
		// The largest max_tokens JSON can carry in an int: vLLM's context-length
		// message, not an overflow.
		{"max_tokens 2^63-1", "/v1/completions", `{"prompt":"a","max_tokens":9223372036854775807}`, 400, "BadRequestError",
			"This model's maximum context length is 32 tokens. However, you requested 9223372036854775808 tokens (1 in the messages, 9223372036854775807 in the completion). Please reduce the length of the messages or completion."},
		// The same through max_completion_tokens on chat.
		{"max_completion_tokens 2^63-1", "/v1/chat/completions", `{"messages":[{"role":"user","content":"a b"}],"max_completion_tokens":9223372036854775807}`, 400, "BadRequestError",
			"However, you requested 9223372036854775809 tokens (2 in the messages, 9223372036854775807 in the completion)."},
		// One more does not fit an int at all.
		{"max_tokens 2^63", "/v1/completions", `{"prompt":"a","max_tokens":9223372036854775808}`, 400, "BadRequestError", "not valid JSON"},
		// A huge min_tokens.
		{"min_tokens 2^63-1", "/v1/completions", `{"prompt":"a","max_tokens":2,"min_tokens":9223372036854775807}`, 400, "BadRequestError", "min_tokens must be less than or equal to max_tokens=2, got 9223372036854775807."},
		// Negative min_tokens.
		{"min_tokens -1", "/v1/completions", `{"prompt":"a","max_tokens":2,"min_tokens":-1}`, 400, "BadRequestError", "min_tokens must be greater than or equal to 0, got -1."},
		// min_tokens above max_tokens.
		{"min above max", "/v1/completions", `{"prompt":"a","max_tokens":2,"min_tokens":3}`, 400, "BadRequestError", "min_tokens must be less than or equal to max_tokens=2"},
		// Negative temperature.
		{"temperature", "/v1/completions", `{"prompt":"a","temperature":-1}`, 400, "BadRequestError", "temperature must be non-negative"},
		// stream_options needs stream.
		{"stream options", "/v1/completions", `{"prompt":"a","stream_options":{"include_usage":true}}`, 400, "BadRequestError", "stream=True"},
		// Not JSON at all.
		{"bad json", "/v1/completions", `{"prompt":`, 400, "BadRequestError", "not valid JSON"},
		// No messages.
		{"no messages", "/v1/chat/completions", `{"messages":[]}`, 400, "BadRequestError", "messages must be a non-empty list"},
		// An image part.
		{"image part to a text model", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="}}]}]}`, 400, "BadRequestError", "is not a multimodal model"},
		{"audio part", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"input_audio"}]}]}`, 400, "BadRequestError", "takes \"text\" and \"image_url\" parts"},
		// Two prompts in one request.
		{"batch prompt", "/v1/completions", `{"prompt":["a","b"]}`, 400, "BadRequestError", "one prompt per request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, b := m.post(t, tt.path, tt.body)
			var e struct {
				Error apiError `json:"error"`
			}
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("body %s: %v", b, err)
			}
			if code != tt.status || e.Error.Type != tt.typ || e.Error.Code != tt.status || !strings.Contains(e.Error.Message, tt.message) {
				t.Errorf("got %d %s, want %d %s containing %q", code, b, tt.status, tt.typ, tt.message)
			}
		})
	}
}

func TestAuth(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--api-key", "s3cr3t-key")
	chat := `{"messages":[{"role":"user","content":"hi"}],"max_tokens":1}`
	tests := []struct {
		name, method, path, auth string
		want                     int
	}{
		// No header on /v1: 401.
		{"no key", "POST", "/v1/chat/completions", "", 401},
		// A wrong key: 401.
		{"wrong key", "POST", "/v1/chat/completions", "Bearer nope", 401},
		// The key without "Bearer ": 401.
		{"no bearer", "POST", "/v1/chat/completions", "s3cr3t-key", 401},
		// The right key.
		{"right key", "POST", "/v1/chat/completions", "Bearer s3cr3t-key", 200},
		// /v1/models is under /v1 too.
		{"models", "GET", "/v1/models", "", 401},
		// Operational endpoints are open, as in vLLM.
		{"health", "GET", "/health", "", 200},
		{"metrics", "GET", "/metrics", "", 200},
		{"version", "GET", "/version", "", 200},
		{"ping", "GET", "/ping", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body *strings.Reader
			if tt.method == "POST" {
				body = strings.NewReader(chat)
			} else {
				body = strings.NewReader("")
			}
			req, _ := http.NewRequest(tt.method, m.url+tt.path, body)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
			}
			if tt.want == 401 && got["error"] != "Unauthorized" {
				t.Errorf("401 body %v, want {\"error\":\"Unauthorized\"}", got)
			}
		})
	}
	if strings.Contains(m.log.String(), "s3cr3t-key") {
		t.Error("the API key appears in the log")
	}
}

func TestModelsVersionHealth(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--served-model-name", "a", "b", "--max-model-len", "2048")
	code, b := m.get(t, "/v1/models")
	var list struct {
		Object string      `json:"object"`
		Data   []modelCard `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil || code != 200 {
		t.Fatalf("/v1/models: %d %s", code, b)
	}
	if list.Object != "list" || len(list.Data) != 2 || list.Data[0].ID != "a" || list.Data[1].ID != "b" || list.Data[0].OwnedBy != "vllm" || list.Data[0].MaxModelLen != 2048 || list.Data[0].Root != "sim-model" {
		t.Errorf("/v1/models = %s", b)
	}
	if code, b := m.get(t, "/version"); code != 200 || string(b) != `{"version":"`+Version+`"}` {
		t.Errorf("/version = %d %s", code, b)
	}
	// --sim-vllm-version says which release the simulator stands for, and
	// /version says it too (over --sim-metrics-version's default).
	for _, args := range [][]string{{"--sim-vllm-version", "0.10.1.1"}, {"--sim-vllm-version", "0.10.1.1", "--sim-metrics-version", "0.9"}} {
		if code, b := startSim(t, args...).get(t, "/version"); code != 200 || string(b) != `{"version":"0.10.1.1-sim"}` {
			t.Errorf("%v: /version = %d %s, want 0.10.1.1-sim", args, code, b)
		}
	}
	if code, _ := m.get(t, "/health"); code != 200 {
		t.Errorf("/health = %d, want 200", code)
	}
	// Served names replace the model path: the path is not a valid model.
	if code, _ := m.post(t, "/v1/completions", `{"model":"sim-model","prompt":"a","max_tokens":1}`); code != 404 {
		t.Errorf("model path with --served-model-name: %d, want 404", code)
	}
	if code, _ := m.post(t, "/v1/completions", `{"model":"b","prompt":"a","max_tokens":1}`); code != 200 {
		t.Errorf("second served name: %d, want 200", code)
	}
}

func TestClientDisconnectAborts(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--sim-fixed-itl", "20ms")
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.url+"/v1/completions",
		strings.NewReader(`{"prompt":"a b c","max_tokens":500,"ignore_eos":true,"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatalf("read first bytes: %v", err)
	}
	cancel()
	resp.Body.Close()
	if !waitFor(5e9, func() bool {
		return sum(m.scrape(t), "vllm:request_success_total", "finished_reason", "abort") == 1
	}) {
		t.Errorf("request_success_total{finished_reason=\"abort\"} never reached 1 after the client went away")
	}
}

// TestCountersReconcile checks that the engine's counters agree exactly
// with what the clients received.
func TestCountersReconcile(t *testing.T) {
	t.Parallel()
	m := startSim(t)
	const n = 24
	var mu sync.Mutex
	var prompt, completion int
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			words := strings.Repeat(fmt.Sprintf("w%d ", i), 3+i)
			maxTok := 2 + i%7
			var u usage
			if i%2 == 0 {
				body := fmt.Sprintf(`{"prompt":%q,"max_tokens":%d,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, words, maxTok)
				res := m.stream(t, context.Background(), "/v1/completions", body)
				if res.err != nil || !res.done || len(res.events) == 0 {
					errs <- fmt.Errorf("request %d: err %v done %v", i, res.err, res.done)
					return
				}
				var c wireChunk
				if err := json.Unmarshal([]byte(res.events[len(res.events)-1].data), &c); err != nil || c.Usage == nil {
					errs <- fmt.Errorf("request %d: no usage chunk", i)
					return
				}
				u = *c.Usage
			} else {
				code, b := m.post(t, "/v1/chat/completions", fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"max_tokens":%d}`, words, maxTok))
				var resp struct{ Usage usage }
				if err := json.Unmarshal(b, &resp); err != nil || code != 200 {
					errs <- fmt.Errorf("request %d: %d %s", i, code, b)
					return
				}
				u = resp.Usage
			}
			mu.Lock()
			prompt += u.PromptTokens
			completion += u.CompletionTokens
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	mfs := m.scrape(t)
	if got := sum(mfs, "vllm:generation_tokens_total"); got != float64(completion) {
		t.Errorf("generation_tokens_total = %v, clients received %d", got, completion)
	}
	if got := sum(mfs, "vllm:prompt_tokens_total"); got != float64(prompt) {
		t.Errorf("prompt_tokens_total = %v, clients sent %d", got, prompt)
	}
	ok := sum(mfs, "vllm:request_success_total", "finished_reason", "length") + sum(mfs, "vllm:request_success_total", "finished_reason", "stop")
	if ok != n {
		t.Errorf("request_success_total{stop|length} = %v, want %d", ok, n)
	}
}

func TestSpeculativeChunksCarrySeveralTokens(t *testing.T) {
	t.Parallel()
	// The timing model, not fixed timings: speculative decoding lives there.
	// --sim-slowdown 20 stretches every engine step 20-fold, so that a
	// reader slowed by the machine (go test runs other packages beside this
	// one) does not fall a whole step behind and get two steps in one chunk
	// (vLLM merges them too; once in a CI run under -race the test saw 19
	// chunks for 64 tokens and 44 accepted draft tokens).
	m := startSimRaw(t, "sim-model", "--disable-log-stats", "--sim-gpu", "h100", "--sim-slowdown", "20", "--speculative-config", `{"method":"ngram","num_speculative_tokens":4,"prompt_lookup_max":4}`)
	prompt := strings.Repeat("the cache holds the blocks of the prompt ", 20)
	body := fmt.Sprintf(`{"prompt":%q,"max_tokens":64,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}}`, prompt)
	res := m.stream(t, context.Background(), "/v1/completions", body)
	if res.err != nil || !res.done {
		t.Fatalf("stream: %v", res.err)
	}
	prev, maxDelta, contentChunks := 0, 0, 0
	for _, c := range decodeChunks(t, res.events) {
		if len(c.Choices) == 0 || c.Usage == nil {
			continue
		}
		contentChunks++
		maxDelta = max(maxDelta, c.Usage.CompletionTokens-prev)
		prev = c.Usage.CompletionTokens
	}
	if prev != 64 {
		t.Errorf("completion_tokens = %d, want 64", prev)
	}
	if maxDelta < 2 || contentChunks >= 64 {
		t.Errorf("largest chunk carried %d tokens over %d chunks: speculative decoding should put several tokens in some chunks", maxDelta, contentChunks)
	}
	// The extra tokens per chunk are accepted draft tokens, not chunks merged
	// by a slow reader: each step yields 1 + accepted tokens.
	accepted := sum(m.scrape(t), "vllm:spec_decode_num_accepted_tokens_total")
	if accepted == 0 || float64(64-contentChunks) > accepted {
		t.Errorf("%d chunks for 64 tokens but %v accepted draft tokens", contentChunks, accepted)
	}
}

// presetArgs serves model on an h200 at the smallest tensor-parallel size
// (a power of two) whose share of the weights, in 16 bits, takes at most
// half a GPU's memory, so that every model preset starts, the 70B one too.
func presetArgs(t *testing.T, model string) []string {
	t.Helper()
	m, ok := presets.LookupModel(model)
	g, gok := presets.LookupGPU("h200")
	if !ok || !gok {
		t.Fatalf("no preset for %s or h200", model)
	}
	tp := 1
	for 2*m.Params/float64(tp) > g.MemBytes/2 {
		tp *= 2
	}
	return []string{model, "--sim-gpu", "h200", "--tensor-parallel-size", fmt.Sprint(tp), "--max-model-len", "4096"}
}

// TestEveryModelPresetTakesItsPrompts: every model preset accepts, through
// HTTP, the prompts the load generator builds (its 256 words, each one
// token) on both endpoints and token-id prompts up to the last id of its
// own vocabulary, and answers vLLM's 400 for an id past it (issue 23: the
// tokenizer hashed every word into Qwen's vocabulary, which Llama's engine
// refused).
func TestEveryModelPresetTakesItsPrompts(t *testing.T) {
	t.Parallel()
	words := workload.Vocabulary()
	text, _ := json.Marshal(strings.Join(words, " "))
	for _, model := range presets.ModelPresetNames() {
		t.Run(model, func(t *testing.T) {
			t.Parallel()
			if p, _ := presets.LookupModel(model); p.Pooling {
				t.Skip("a pooling model serves /v1/embeddings only: TestEmbeddings and TestEmbeddingErrors")
			}
			vocab := func() int { m, _ := presets.LookupModel(model); return m.Vocab }()
			m := startSimRaw(t, append(presetArgs(t, model), "--sim-fixed-ttft", "5ms", "--sim-fixed-itl", "1ms", "--disable-log-stats")...)
			oov := func(id int64) string {
				return fmt.Sprintf("Token id %d is out of vocabulary (vocab size %d)", id, vocab)
			}
			tests := []struct {
				name, path, body string
				status, prompt   int    // the status; with 200, usage.prompt_tokens
				message          string // with 400, the error's message
			}{
				// The 256 workload words as a user message: one token each.
				{"chat words", "/v1/chat/completions", `{"messages":[{"role":"user","content":` + string(text) + `}],"max_tokens":2}`, 200, len(words), ""},
				// The same words as a completion prompt.
				{"completion words", "/v1/completions", `{"prompt":` + string(text) + `,"max_tokens":2}`, 200, len(words), ""},
				// The first and the last id of the model's vocabulary.
				{"ids in vocabulary", "/v1/completions", fmt.Sprintf(`{"prompt":[0,%d],"max_tokens":2}`, vocab-1), 200, 2, ""},
				// One past the last: vLLM's 400, whatever the other presets' sizes.
				{"id past vocabulary", "/v1/completions", fmt.Sprintf(`{"prompt":[[0,%d]],"max_tokens":2}`, vocab), 400, 0, oov(int64(vocab))},
				// A negative id.
				{"negative id", "/v1/completions", `{"prompt":[5,-1],"max_tokens":2}`, 400, 0, oov(-1)},
				// An id no int32 holds gets the same answer.
				{"id past int32", "/v1/completions", `{"prompt":[2147483648],"max_tokens":2}`, 400, 0, oov(1 << 31)},
				// vLLM checks the length before the ids.
				{"length first", "/v1/completions", fmt.Sprintf(`{"prompt":[%d],"max_tokens":4096}`, vocab), 400, 0, "maximum context length is 4096 tokens"},
			}
			for _, tt := range tests {
				code, b := m.post(t, tt.path, tt.body)
				var resp struct {
					Usage usage    `json:"usage"`
					Error apiError `json:"error"`
				}
				if err := json.Unmarshal(b, &resp); err != nil {
					t.Fatalf("%s: body %s: %v", tt.name, b, err)
				}
				switch {
				case code != tt.status:
					t.Errorf("%s: status %d (%s), want %d", tt.name, code, b, tt.status)
				case code == http.StatusOK && resp.Usage.PromptTokens != tt.prompt:
					t.Errorf("%s: %d prompt tokens, want %d", tt.name, resp.Usage.PromptTokens, tt.prompt)
				case code != http.StatusOK && (resp.Error.Type != "BadRequestError" || resp.Error.Param != nil || !strings.Contains(resp.Error.Message, tt.message)):
					t.Errorf("%s: error %s, want a BadRequestError without param containing %q", tt.name, b, tt.message)
				}
			}
		})
	}
}

// TestChatRequestsReachTheEngineAsChat: the chat endpoint's requests carry
// engine.Request.Chat (the front end's chat-template cost), completions do
// not.
func TestChatRequestsReachTheEngineAsChat(t *testing.T) {
	tok := tokenizer.NewTokenizer(151936)
	served := []string{"Qwen/Qwen3-0.6B"}
	for _, tt := range []struct {
		name  string
		parse parseFunc
		body  string
		chat  bool
	}{
		{"chat", parseChat, `{"model":"Qwen/Qwen3-0.6B","messages":[{"role":"user","content":"hello there"}],"max_tokens":4}`, true},
		{"completion", parseCompletion, `{"model":"Qwen/Qwen3-0.6B","prompt":"hello there","max_tokens":4}`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, aerr := tt.parse([]byte(tt.body), served, tok)
			if aerr != nil {
				t.Fatal(aerr.Message)
			}
			if got := g.engineRequest("id").Chat; got != tt.chat {
				t.Errorf("engine request Chat = %v, want %v", got, tt.chat)
			}
		})
	}
}
