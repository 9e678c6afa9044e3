package llmd

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The differences from vLLM that docs/third-party-servers.md lists,
// measured on the pinned release: when a new release changes one, this
// test fails and the page needs the change too.

// post sends body to path and returns the status and the whole answer.
func post(t *testing.T, p *Process, path, body string) (int, string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Post(p.BaseURL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// events splits an SSE answer into its data: payloads.
func events(body string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// chat is a one-message chat request with extra fields (JSON, no braces).
func chat(served, extra string) string {
	return `{"model":"` + served + `","messages":[{"role":"user","content":"Hello there"}]` + extra + `}`
}

// TestDifferencesEndpoints: /version and /ping are missing; /health
// answers 200 with an empty body; /v1/models carries max_model_len.
func TestDifferencesEndpoints(t *testing.T) {
	p := StartT(t, "--max-model-len", "300")
	for path, want := range map[string]int{"/version": 404, "/ping": 404, "/health": 200, "/health/ready": 200, "/metrics": 200} {
		resp, err := http.Get(p.BaseURL() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
	resp, err := http.Get(p.BaseURL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var models struct {
		Data []struct {
			ID          string `json:"id"`
			OwnedBy     string `json:"owned_by"`
			MaxModelLen int    `json:"max_model_len"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil {
		t.Fatal(err)
	}
	if len(models.Data) != 1 || models.Data[0].MaxModelLen != 300 || models.Data[0].OwnedBy != "vllm" {
		t.Errorf("/v1/models = %+v, want one model, max_model_len 300, owned_by vllm", models.Data)
	}
}

// TestDifferencesStream: the first chunk carries the role and no content
// key, every token its own chunk, finish_reason a chunk of its own with an
// empty delta, usage only with include_usage and only at the end
// (continuous_usage_stats is ignored); ignore_eos needs max_tokens.
func TestDifferencesStream(t *testing.T) {
	p := StartT(t, "--max-model-len", "300", "--time-to-first-token", "5ms", "--inter-token-latency", "1ms")
	code, body := post(t, p, "/v1/chat/completions", chat(p.Model(), `,"max_tokens":4,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`))
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	ev := events(body)
	type chunk struct {
		Usage   json.RawMessage `json:"usage"`
		Choices []struct {
			Delta        map[string]any `json:"delta"`
			FinishReason *string        `json:"finish_reason"`
		} `json:"choices"`
	}
	var chunks []chunk
	for _, e := range ev[:len(ev)-1] {
		var c chunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("%q: %v", e, err)
		}
		chunks = append(chunks, c)
	}
	// role, 4 tokens, finish, usage, then [DONE].
	if len(chunks) != 7 || ev[len(ev)-1] != "[DONE]" {
		t.Fatalf("%d chunks, last %q; want 7 and [DONE]:\n%s", len(chunks), ev[len(ev)-1], body)
	}
	if d := chunks[0].Choices[0].Delta; d["role"] != "assistant" || d["content"] != nil {
		t.Errorf("first delta %v, want the role and no content key", d)
	}
	for i, c := range chunks[:6] {
		if string(c.Usage) != "null" {
			t.Errorf("chunk %d carries usage %s (continuous_usage_stats honoured?)", i, c.Usage)
		}
	}
	if f := chunks[5].Choices[0]; f.FinishReason == nil || *f.FinishReason != "length" || len(f.Delta) != 0 {
		t.Errorf("finish chunk %+v, want length with an empty delta", f)
	}
	if len(chunks[6].Choices) != 0 || !strings.Contains(string(chunks[6].Usage), `"completion_tokens":4`) {
		t.Errorf("last chunk %+v, want usage with 4 completion tokens and no choices", chunks[6])
	}
	// Without include_usage: no usage chunk at all.
	_, body = post(t, p, "/v1/chat/completions", chat(p.Model(), `,"max_tokens":2,"ignore_eos":true,"stream":true`))
	if strings.Contains(body, `"completion_tokens"`) {
		t.Errorf("usage without include_usage:\n%s", body)
	}
	// ignore_eos without max_tokens: 400 (vLLM generates up to the context).
	if code, body := post(t, p, "/v1/chat/completions", chat(p.Model(), `,"ignore_eos":true`)); code != 400 || !strings.Contains(body, "Ignore_eos is true but max_completion_tokens") {
		t.Errorf("ignore_eos without max_tokens: %d %s", code, body)
	}
}

// TestDifferencesContextLength: a prompt over max-model-len is refused with
// vLLM's message and error shape, 400 without streaming, but HTTP 200 and
// an SSE error event when streaming.
func TestDifferencesContextLength(t *testing.T) {
	p := StartT(t, "--max-model-len", "16")
	long := chat(p.Model(), `,"max_tokens":10`) // 7 prompt tokens + 10 > 16
	code, body := post(t, p, "/v1/chat/completions", long)
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || code != 400 || e.Error.Code != 400 || e.Error.Type != "BadRequestError" ||
		!strings.HasPrefix(e.Error.Message, "This model's maximum context length is 16 tokens. However, you requested") {
		t.Errorf("non-streamed: %d %s", code, body)
	}
	code, body = post(t, p, "/v1/chat/completions", strings.TrimSuffix(long, "}")+`,"stream":true}`)
	ev := events(body)
	if code != 200 || len(ev) != 2 || !strings.HasPrefix(ev[0], `{"error":{"message":"This model's maximum context length is 16`) || ev[1] != "[DONE]" {
		t.Errorf("streamed: %d %q, want 200 with an error event and [DONE]", code, ev)
	}
}

// TestDifferencesInjectedFailure: injected failures come as the HTTP
// status before any stream, with an OpenAI error body, and are counted by
// no metric.
func TestDifferencesInjectedFailure(t *testing.T) {
	p := StartT(t, "--failure-injection-rate", "100", "--failure-types", "rate_limit")
	code, body := post(t, p, "/v1/chat/completions", chat(p.Model(), `,"max_tokens":2,"stream":true`))
	if code != 429 || !strings.Contains(body, `"type":"RateLimitError"`) || strings.Contains(body, "data:") {
		t.Errorf("injected rate_limit: %d %s", code, body)
	}
	if fams := scrape(t, p); fams["vllm:request_success_total"] != nil {
		t.Errorf("an injected failure was counted: %v", fams["vllm:request_success_total"])
	}
}

// TestDifferencesEcho: echo mode returns the prompt whatever max_tokens
// says, with finish_reason length when it is longer.
func TestDifferencesEcho(t *testing.T) {
	p := StartT(t, "--mode", "echo")
	_, body := post(t, p, "/v1/completions", `{"model":"`+p.Model()+`","prompt":"one two three four five six","max_tokens":3}`)
	if !strings.Contains(body, `"completion_tokens":6`) || !strings.Contains(body, `"finish_reason":"length"`) {
		t.Errorf("echo with max_tokens 3: %s", body)
	}
}

// TestDifferencesConfigErrorExitsZero: a rejected flag is logged and the
// process exits with status 0.
func TestDifferencesConfigErrorExitsZero(t *testing.T) {
	path := needBinary(t)
	out, err := exec.CommandContext(t.Context(), path, OfflineFlag, "--model", "m", "--dtype", "float16").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `err="unknown flag: --dtype"`) {
		t.Errorf("exit %v, output:\n%s", err, out)
	}
}

// scrape parses the simulator's /metrics.
func scrape(t *testing.T, p *Process) map[string]*promFamily {
	t.Helper()
	resp, err := http.Get(p.BaseURL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*promFamily{}
	for name, f := range fams {
		pf := &promFamily{labels: map[string]bool{}}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				pf.labels[l.GetName()] = true
			}
			if h := m.GetHistogram(); h != nil {
				pf.sum += h.GetSampleSum()
				pf.count += h.GetSampleCount()
			}
		}
		out[name] = pf
	}
	return out
}

// promFamily is what these tests read of a metric family.
type promFamily struct {
	labels map[string]bool
	sum    float64
	count  uint64
}

// TestDifferencesMetrics: the names, labels and meanings of /metrics after
// requests, against vLLM V1's list (vllm-reference.md §2).
func TestDifferencesMetrics(t *testing.T) {
	p := StartT(t, "--time-to-first-token", "20ms", "--inter-token-latency", "2ms")
	before := scrape(t, p)
	// Before any request only the unlabelled-by-request gauges are there.
	for _, name := range []string{"vllm:generation_tokens_total", "vllm:prompt_tokens_total", "vllm:time_to_first_token_seconds"} {
		if before[name] != nil {
			t.Errorf("%s exposed before any request", name)
		}
	}
	const n = 3
	for range n {
		if code, body := post(t, p, "/v1/chat/completions", chat(p.Model(), `,"max_tokens":5,"ignore_eos":true`)); code != 200 {
			t.Fatalf("%d %s", code, body)
		}
	}
	// The counters are updated by a goroutine after the answer: wait for it.
	var fams map[string]*promFamily
	for deadline := time.Now().Add(5 * time.Second); ; {
		fams = scrape(t, p)
		if f := fams["vllm:e2e_request_latency_seconds"]; (f != nil && f.count == n) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	present := []string{
		"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc", "vllm:cache_config_info",
		"vllm:prompt_tokens_total", "vllm:generation_tokens_total", "vllm:request_success_total",
		"vllm:time_to_first_token_seconds", "vllm:inter_token_latency_seconds", "vllm:e2e_request_latency_seconds",
		"vllm:request_inference_time_seconds", "vllm:request_prefill_time_seconds", "vllm:request_decode_time_seconds",
		"vllm:request_prompt_tokens", "vllm:request_generation_tokens", "vllm:request_params_max_tokens",
		// Not (or no longer) vLLM V1's.
		"vllm:time_per_output_token_seconds", "vllm:max_num_generation_tokens", "vllm:lora_requests_info",
	}
	// The family's Missing (the one list of them), and the prefix-cache
	// counters under any name.
	absent := []string{"vllm:prefix_cache_queries", "vllm:prefix_cache_hits",
		// Observed only for requests that waited: none did.
		"vllm:request_queue_time_seconds",
	}
	for _, name := range Family.Metrics.Missing {
		absent = append(absent, Family.Metrics.Prefix+name)
	}
	for _, name := range present {
		if fams[name] == nil {
			t.Errorf("%s missing", name)
		}
	}
	for _, name := range absent {
		if fams[name] != nil {
			t.Errorf("%s present", name)
		}
	}
	if cc := fams["vllm:cache_config_info"]; cc != nil {
		var labels []string
		for l := range cc.labels {
			labels = append(labels, l)
		}
		slices.Sort(labels)
		if !slices.Equal(labels, []string{"block_size", "num_gpu_blocks"}) {
			t.Errorf("cache_config_info labels %v, want block_size and num_gpu_blocks only", labels)
		}
	}
	for name, f := range fams {
		if f.labels["engine"] {
			t.Errorf("%s has an engine label", name)
		}
	}
	// The TTFT histogram records the configured delay, not a measurement:
	// exactly 20 ms each (vLLM's counts from arrival, queue included).
	if f := fams["vllm:time_to_first_token_seconds"]; f == nil || f.count != n || math.Abs(f.sum-n*0.02) > 1e-9 {
		t.Errorf("TTFT histogram %+v, want %d observations summing to exactly %v", f, n, n*0.02)
	}
}

// TestDifferencesStructured: response_format json_schema is ignored (the
// answer is the random text of any request); a forced tool call follows
// the parameters; bounds on an integer parameter are refused.
func TestDifferencesStructured(t *testing.T) {
	p := StartT(t)
	schema := `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`
	_, body := post(t, p, "/v1/chat/completions", chat(p.Model(), `,"max_tokens":40,"response_format":{"type":"json_schema","json_schema":{"name":"p","schema":`+schema+`}}`))
	var resp struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || len(resp.Choices) != 1 || json.Valid([]byte(resp.Choices[0].Message.Content)) {
		t.Errorf("response_format: %s (want text that is not JSON)", body)
	}
	tool := func(params string) (int, string) {
		return post(t, p, "/v1/chat/completions", chat(p.Model(), `,"max_tokens":60,"tools":[{"type":"function","function":{"name":"f","parameters":`+params+`}}],"tool_choice":{"type":"function","function":{"name":"f"}}`))
	}
	code, body := tool(`{"type":"object","properties":{"days":{"type":"integer"}},"required":["days"],"additionalProperties":false}`)
	if code != 200 || !strings.Contains(body, `"tool_calls"`) || !strings.Contains(body, `days`) {
		t.Errorf("forced tool call: %d %s", code, body)
	}
	code, body = tool(`{"type":"object","properties":{"days":{"type":"integer","minimum":1}}}`)
	if code != 400 || !strings.Contains(body, "Tool validation failed") {
		t.Errorf("integer bounds: %d %s", code, body)
	}
}
