package vllmsim

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

const streamBody = `{"prompt":"alpha beta gamma","max_tokens":10,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`

func TestFaultStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want int
		typ  string
	}{
		// Every request fails with 500.
		{"500", []string{"--sim-fault-500-rate", "1"}, 500, "InternalServerError"},
		// Every request is rate limited.
		{"429", []string{"--sim-fault-429-rate", "1"}, 429, "RateLimitError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := startSim(t, tt.args...)
			code, b := m.post(t, "/v1/completions", `{"prompt":"a","max_tokens":2}`)
			var e struct{ Error apiError }
			if err := json.Unmarshal(b, &e); err != nil || code != tt.want || e.Error.Type != tt.typ {
				t.Errorf("got %d %s, want %d %s", code, b, tt.want, tt.typ)
			}
			// The request never reached the engine.
			if got := sum(m.scrape(t), "vllm:prompt_tokens_total"); got != 0 {
				t.Errorf("prompt_tokens_total = %v after injected errors, want 0", got)
			}
		})
	}
}

func TestFaultRatesAreSeeded(t *testing.T) {
	t.Parallel()
	draws := func(seed int64) []int {
		f := newFaultInjector(seed, config.FaultOptions{Rate500: 0.3, Rate429: 0.2})
		out := make([]int, 200)
		for i := range out {
			out[i] = f.draw(10).status
		}
		return out
	}
	a, b := draws(7), draws(7)
	n500 := 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("draw %d differs for the same seed", i)
		}
		if a[i] == 500 {
			n500++
		}
	}
	// 200 draws at 0.3: 60 expected; 30..90 is far beyond 4 sigma (6.5).
	if n500 < 30 || n500 > 90 {
		t.Errorf("%d of 200 draws were 500 at rate 0.3", n500)
	}
}

func TestFaultDisconnect(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--sim-fault-disconnect-rate", "1")
	res := m.stream(t, context.Background(), "/v1/completions", streamBody)
	if res.err == nil {
		t.Error("a cut stream read to a clean end; want an unexpected EOF")
	}
	if res.done {
		t.Error("a cut stream carried [DONE]")
	}
	if len(res.events) == 0 {
		t.Error("the stream was cut before any chunk: want it cut mid-way")
	}
	for _, c := range decodeChunks(t, res.events) {
		if c.Usage != nil || (len(c.Choices) > 0 && c.Choices[0].FinishReason != nil) {
			t.Errorf("a cut stream carried finish_reason or usage: %+v", c)
		}
	}
	// Non-streamed: the connection closes without a response.
	req, _ := http.NewRequest(http.MethodPost, m.url+"/v1/completions", strings.NewReader(`{"prompt":"a","max_tokens":4}`))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("non-streamed request under disconnect got a response: %d", resp.StatusCode)
	}
}

// TestStallCountsTokens: the stall lands on the output that carries its
// token, however the engine merged the outputs of a slow reader (a busy
// -race run merged all ten tokens into one output, and a stall placed by
// output count never came), and before the last output of a request that
// ends sooner.
func TestStallCountsTokens(t *testing.T) {
	t.Parallel()
	toks := func(n int) []int32 { return make([]int32, n) }
	for _, tc := range []struct {
		name    string
		outputs []engine.Output
		stallAt int
		before  int // the output (1-based) the stream pauses before
	}{
		{"one output a token", []engine.Output{{Tokens: toks(1)}, {Tokens: toks(1)}, {Tokens: toks(1), Finished: true}}, 2, 2},
		{"all merged into one", []engine.Output{{Tokens: toks(10), Finished: true}}, 4, 1},
		{"merged past the token", []engine.Output{{Tokens: toks(2)}, {Tokens: toks(5)}, {Tokens: toks(3), Finished: true}}, 4, 2},
		{"ends before the token", []engine.Output{{Tokens: toks(1)}, {Tokens: toks(1), Finished: true}}, 5, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := make(chan engine.Output, len(tc.outputs))
			for _, o := range tc.outputs {
				ch <- o
			}
			close(ch)
			s := &outputStream{ch: ch, ctx: context.Background(), faults: requestFaults{stallAt: tc.stallAt, stallFor: time.Millisecond}, finished: func() bool { return true }}
			for i := 1; i <= len(tc.outputs); i++ {
				if _, step := s.next(); step != stepOutput {
					t.Fatalf("output %d: step %v, want an output", i, step)
				}
				if want := i >= tc.before; s.stalled != want {
					t.Fatalf("after output %d: stalled %v, want %v (the pause comes before output %d)", i, s.stalled, want, tc.before)
				}
			}
		})
	}
}

func TestFaultStall(t *testing.T) {
	t.Parallel()
	const stall = 300 * time.Millisecond
	m := startSim(t, "--sim-fault-stall", stall.String(), "--sim-fault-stall-rate", "1")
	res := m.stream(t, context.Background(), "/v1/completions", streamBody)
	if res.err != nil || !res.done {
		t.Fatalf("stalled stream must still complete: err %v done %v", res.err, res.done)
	}
	prev, gap := res.start, time.Duration(0)
	for _, e := range res.events {
		gap = max(gap, e.at.Sub(prev))
		prev = e.at
	}
	// The server waits the full stall between two writes; the client may
	// have read the earlier event a little late (busy CI cores), so allow
	// 20% on the gap, none on the whole stream (1 ms per token otherwise).
	if gap < stall*8/10 {
		t.Errorf("largest gap between events %v, want about %v", gap, stall)
	}
	if total := prev.Sub(res.start); total < stall {
		t.Errorf("stream took %v, less than the %v stall", total, stall)
	}
	var c wireChunk
	_ = json.Unmarshal([]byte(res.events[len(res.events)-1].data), &c)
	if c.Usage == nil || c.Usage.CompletionTokens != 10 {
		t.Errorf("usage after a stall = %+v, want 10 completion tokens", c.Usage)
	}
}

func TestFaultMetrics(t *testing.T) {
	t.Parallel()
	t.Run("delay", func(t *testing.T) {
		t.Parallel()
		const d = 200 * time.Millisecond
		m := startSim(t, "--sim-fault-metrics-delay", d.String())
		start := time.Now()
		m.scrape(t)
		if el := time.Since(start); el < d {
			t.Errorf("/metrics answered after %v, want >= %v", el, d)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		t.Parallel()
		m := startSim(t, "--sim-fault-metrics-malformed")
		m.post(t, "/v1/completions", `{"prompt":"a","max_tokens":2}`)
		code, b := m.get(t, "/metrics")
		if code != 200 {
			t.Fatalf("/metrics status %d", code)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		if _, err := p.TextToMetricFamilies(bytes.NewReader(b)); err == nil {
			t.Errorf("malformed /metrics parsed cleanly:\n%s", b)
		}
	})
}

func TestFaultRestartResetsCounters(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--sim-fault-restart-after", "2")
	for range 2 {
		if code, b := m.post(t, "/v1/completions", `{"prompt":"a b","max_tokens":3,"ignore_eos":true}`); code != 200 {
			t.Fatalf("status %d: %s", code, b)
		}
	}
	if got := sum(m.scrape(t), "vllm:generation_tokens_total"); got != 0 {
		t.Errorf("generation_tokens_total = %v right after the restart, want 0", got)
	}
	if code, b := m.post(t, "/v1/completions", `{"prompt":"a b","max_tokens":4,"ignore_eos":true}`); code != 200 {
		t.Fatalf("after restart: %d %s", code, b)
	}
	mfs := m.scrape(t)
	if got := sum(mfs, "vllm:generation_tokens_total"); got != 4 {
		t.Errorf("generation_tokens_total = %v after one request on the new engine, want 4", got)
	}
	if got := sum(mfs, "vllm:prompt_tokens_total"); got != 2 {
		t.Errorf("prompt_tokens_total = %v after one request on the new engine, want 2", got)
	}
	if code, _ := m.get(t, "/health"); code != 200 {
		t.Errorf("/health after restart = %d, want 200", code)
	}
}

func TestFaultDie(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--sim-fault-die-after", "1")
	if code, _ := m.get(t, "/health"); code != 200 {
		t.Fatalf("/health before = %d", code)
	}
	if code, b := m.post(t, "/v1/completions", `{"prompt":"a","max_tokens":2}`); code != 200 {
		t.Fatalf("first request: %d %s", code, b)
	}
	if code, _ := m.get(t, "/health"); code != 503 {
		t.Errorf("/health after death = %d, want 503", code)
	}
	code, b := m.post(t, "/v1/completions", `{"prompt":"a","max_tokens":2}`)
	if code != 500 || !strings.Contains(string(b), "EngineCore") {
		t.Errorf("request after death: %d %s, want 500 naming EngineCore", code, b)
	}
}

// TestFaultDieExactCount: with --sim-fault-die-after 1, requests that
// finish in the same engine step as the first fail with it: exactly one
// completes, however the steps fall.
func TestFaultDieExactCount(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--sim-fault-die-after", "1", "--sim-fixed-itl", "20ms")
	codes := make(chan int, 4)
	for range 4 {
		go func() {
			code, _ := m.post(t, "/v1/completions", `{"prompt":"a b","max_tokens":3,"ignore_eos":true}`)
			codes <- code
		}()
	}
	ok := 0
	for range 4 {
		if <-codes == 200 {
			ok++
		}
	}
	if ok != 1 {
		t.Errorf("%d of 4 requests completed with the engine dying after 1, want exactly 1", ok)
	}
}

func TestStartup(t *testing.T) {
	t.Parallel()
	const d = 300 * time.Millisecond
	m := startSim(t, "--sim-startup", d.String())
	if code, _ := m.get(t, "/health"); code != 503 {
		t.Errorf("/health during start-up = %d, want 503", code)
	}
	if code, _ := m.post(t, "/v1/completions", `{"prompt":"a","max_tokens":1}`); code != 503 {
		t.Errorf("/v1/completions during start-up = %d, want 503", code)
	}
	if !waitFor(5*time.Second, func() bool { code, _ := m.get(t, "/health"); return code == 200 }) {
		t.Fatal("/health never turned 200")
	}
	if el := time.Since(m.s.created); el < d {
		t.Errorf("healthy after %v, before --sim-startup %v", el, d)
	}
	if !waitFor(time.Second, func() bool { return strings.Contains(m.log.String(), "Application startup complete.") }) {
		t.Errorf("log lacks \"Application startup complete.\":\n%s", m.log.String())
	}
}

// TestPromtoolCheckMetrics lints /metrics after load with promtool. vLLM's
// names contain ':' by design; that lint message is allowed. So is one
// more, for one metric only: vLLM V1 registers vllm:iteration_tokens_total
// as a histogram despite its name (vllm/v1/metrics/loggers.py), so real vLLM
// trips promtool's "_total suffix" lint on it too; the simulator keeps the
// real name so that queries written against vLLM work unchanged. Any other
// finding fails.
func TestPromtoolCheckMetrics(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not found and CI=true: install Debian's prometheus package")
		}
		t.Skip("promtool not found (install Debian's prometheus package); CI=true makes this a failure")
	}
	for _, version := range []string{"current", "0.9"} {
		t.Run(version, func(t *testing.T) {
			m := startSim(t, "--sim-metrics-version", version, "--speculative-config", `{"method":"ngram","num_speculative_tokens":3}`)
			for i := range 4 {
				res := m.stream(t, context.Background(), "/v1/completions", strings.Replace(streamBody, "alpha", strings.Repeat("x ", i), 1))
				if res.err != nil {
					t.Fatal(res.err)
				}
			}
			m.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"hello"}],"max_tokens":3}`)
			_, body := m.get(t, "/metrics")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
			cmd.Stdin = bytes.NewReader(body)
			out, _ := cmd.CombinedOutput() // exit status 3 for lint findings; judged by the text
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if line == "" || strings.HasSuffix(line, "metric names should not contain ':'") ||
					line == `vllm:iteration_tokens_total non-counter metrics should not have "_total" suffix` {
					continue
				}
				t.Errorf("promtool: %s", line)
			}
			if ctx.Err() != nil {
				t.Fatal("promtool timed out")
			}
		})
	}
}

// TestEngineErrorMidStream kills the engine (--sim-fault-die-after 1) while
// a long stream is running: that stream must end with data: {"error":...}
// and [DONE], as vLLM's does.
func TestEngineErrorMidStream(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--sim-fault-die-after", "1", "--sim-fixed-itl", "5ms")
	long := make(chan streamResult, 1)
	go func() {
		long <- m.stream(t, context.Background(), "/v1/completions", `{"prompt":"a b","max_tokens":2000,"ignore_eos":true,"stream":true}`)
	}()
	if !waitFor(5*time.Second, func() bool { return sum(m.scrape(t), "vllm:num_requests_running") >= 1 }) {
		t.Fatal("the long request never started running")
	}
	if code, b := m.post(t, "/v1/completions", `{"prompt":"x","max_tokens":1}`); code != 200 {
		t.Fatalf("short request: %d %s", code, b)
	}
	res := <-long
	if res.err != nil || !res.done || len(res.events) < 2 {
		t.Fatalf("long stream: err %v, done %v, %d events", res.err, res.done, len(res.events))
	}
	chunks := decodeChunks(t, res.events)
	last := chunks[len(chunks)-1]
	if last.Error == nil || last.Error.Code != 500 || !strings.Contains(last.Error.Message, "EngineCore") {
		t.Errorf("last event %s: want an error naming EngineCore", res.events[len(res.events)-1].data)
	}
	if chunks[0].text() == "" {
		t.Errorf("first event %s: want content before the error", res.events[0].data)
	}
}

// TestFaultUsageSkew: usage.completion_tokens is off by the skew in every
// answer form, while the engine's counter keeps what it generated, so that
// a client reconciling the two finds the difference.
func TestFaultUsageSkew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		skew int
		want int // completion_tokens reported for 10 generated
	}{
		// Three tokens too many.
		{"over", 3, 13},
		// Fewer than generated.
		{"under", -4, 6},
		// Never below zero.
		{"floor", -100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := startSim(t, "--sim-fault-usage-skew", strconv.Itoa(tt.skew))
			res := m.stream(t, context.Background(), "/v1/completions", strings.Replace(streamBody, `"include_usage":true`, `"include_usage":true,"continuous_usage_stats":true`, 1))
			if res.err != nil || !res.done {
				t.Fatalf("stream: err %v, done %v", res.err, res.done)
			}
			chunks := decodeChunks(t, res.events)
			last := chunks[len(chunks)-1].Usage
			if last == nil || last.CompletionTokens != tt.want || last.TotalTokens != last.PromptTokens+tt.want {
				t.Errorf("streamed usage %+v, want %d completion tokens", last, tt.want)
			}
			if first := chunks[0].Usage; first == nil || first.CompletionTokens != max(0, 1+tt.skew) {
				t.Errorf("first chunk's continuous usage %+v, want the skew on it too", first)
			}
			code, b := m.post(t, "/v1/completions", `{"prompt":"a b c","max_tokens":10,"ignore_eos":true}`)
			var resp struct{ Usage usage }
			if err := json.Unmarshal(b, &resp); err != nil || code != 200 || resp.Usage.CompletionTokens != tt.want {
				t.Errorf("whole answer %d %s, want %d completion tokens", code, b, tt.want)
			}
			if got := sum(m.scrape(t), "vllm:generation_tokens_total"); got != 20 {
				t.Errorf("generation_tokens_total = %v, want the 20 tokens generated", got)
			}
		})
	}
}

// TestFaultDropMetric: the named families are left out of /metrics (and of
// the malformed exposition), the others stay; a name that is no family is
// refused with the closest one.
func TestFaultDropMetric(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--sim-fault-drop-metric", "vllm:kv_cache_usage_perc,vllm:prompt_tokens_total", "--sim-fault-drop-metric", "vllm:time_to_first_token_seconds")
	m.post(t, "/v1/completions", `{"prompt":"a","max_tokens":2}`)
	mfs := m.scrape(t)
	for _, gone := range []string{"vllm:kv_cache_usage_perc", "vllm:prompt_tokens_total", "vllm:time_to_first_token_seconds"} {
		if mfs[gone] != nil {
			t.Errorf("/metrics still has %s", gone)
		}
	}
	for _, kept := range []string{"vllm:num_requests_running", "vllm:generation_tokens_total", "vllm:cache_config_info", "vllm:inter_token_latency_seconds"} {
		if mfs[kept] == nil {
			t.Errorf("/metrics lost %s", kept)
		}
	}
	// The 0.9 names are dropped by their 0.9 spelling.
	old := startSim(t, "--sim-metrics-version", "0.9", "--sim-fault-drop-metric", "vllm:gpu_cache_usage_perc")
	if mfs := old.scrape(t); mfs["vllm:gpu_cache_usage_perc"] != nil || mfs["vllm:num_requests_running"] == nil {
		t.Errorf("0.9 names: drop of vllm:gpu_cache_usage_perc not applied")
	}
	_, err := New(append(append([]string{}, fastArgs...), "--sim-fault-drop-metric", "vllm:kv_cache_usage"), nil)
	var ae *config.ArgError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), `no metric family "vllm:kv_cache_usage"`) || !strings.Contains(err.Error(), "did you mean vllm:kv_cache_usage_perc?") {
		t.Errorf("unknown family: %v, want an *ArgError naming it and the closest family", err)
	}
}

// TestKVCacheLog: the start-up log carries vLLM V1's "Available KV cache
// memory: X.XX GiB" line, from which, with cache_config_info's
// num_gpu_blocks and block_size, a client computes blocks per GiB and the
// KV bytes per token.
func TestKVCacheLog(t *testing.T) {
	t.Parallel()
	m := startSim(t, "--kv-cache-dtype", "fp8")
	match := regexp.MustCompile(`\] Available KV cache memory: (\d+\.\d\d) GiB\n`).FindStringSubmatch(m.log.String())
	if match == nil {
		t.Fatalf("no \"Available KV cache memory: X.XX GiB\" line:\n%s", m.log.String())
	}
	gibs, _ := strconv.ParseFloat(match[1], 64)
	info := m.s.current().eng.Info()
	if want := float64(info.KVCacheBytes) / (1 << 30); math.Abs(gibs-want) > 0.005 {
		t.Errorf("logged %.2f GiB, engine has %.4f GiB", gibs, want)
	}
	var blocks float64
	for _, metric := range m.scrape(t)["vllm:cache_config_info"].GetMetric() {
		for _, l := range metric.GetLabel() {
			if l.GetName() == "num_gpu_blocks" {
				blocks, _ = strconv.ParseFloat(l.GetValue(), 64)
			}
		}
	}
	// Qwen3-0.6B with an fp8 cache: 2 × 28 layers × 8 heads × 128 × 1 byte
	// = 57,344 bytes per token, 16 tokens per block.
	perToken := float64(1<<30) * gibs / (blocks * 16)
	if math.Abs(perToken-57344)/57344 > 0.001 {
		t.Errorf("%v blocks in %.2f GiB: %.0f bytes per token, want 57344", blocks, gibs, perToken)
	}
}

// TestCacheConfigSwapSpace: cache_config_info reports --swap-space as vLLM
// prints it: the default int 4, a given value as a float.
func TestCacheConfigSwapSpace(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "4"},                               // the default
		{[]string{"--swap-space", "8"}, "8.0"},   // given on the command line
		{[]string{"--swap-space", "0.5"}, "0.5"}, // a fraction
	} {
		m := startSim(t, tt.args...)
		found := ""
		for _, metric := range m.scrape(t)["vllm:cache_config_info"].GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "swap_space" {
					found = l.GetValue()
				}
			}
		}
		if found != tt.want {
			t.Errorf("%q: swap_space=%q, want %q", tt.args, found, tt.want)
		}
	}
}
