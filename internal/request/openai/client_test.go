package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

func TestSendSuccess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		endpoint   Endpoint
		fixture    string
		wantTokens []int // Tokens of each content-bearing chunk
		wantN      int
		wantPrompt int
		wantCached int
		wantFinish string
	}{
		// vLLM chat: role-only first chunk (not content), 4 content chunks with
		// continuous usage, the last one together with finish_reason, usage chunk.
		{"chat", Chat, "chat_vllm.sse", []int{1, 1, 1, 1}, 4, 17, 16, "length"},
		// Empty Endpoint defaults to chat.
		{"default endpoint is chat", "", "chat_vllm.sse", []int{1, 1, 1, 1}, 4, 17, 16, "length"},
		// vLLM completions: text chunks, no role chunk.
		{"completions", Completions, "completion_vllm.sse", []int{1, 1, 1, 1}, 4, 9, 0, "length"},
		// Speculative decoding: chunks carry 1, 3, 2 tokens; the EOS token comes
		// in the finish chunk with empty content, so n=7 exceeds the chunk tokens.
		{"several tokens per chunk", Chat, "chat_specdecode.sse", []int{1, 3, 2}, 7, 30, 0, "stop"},
		// No continuous usage: per-chunk tokens unknown (0); n from the final usage.
		{"no continuous usage", Chat, "chat_no_continuous_usage.sse", []int{0, 0, 0}, 4, 5, 0, "stop"},
		// Reasoning deltas are generated output and count as content.
		{"reasoning content", Chat, "chat_reasoning.sse", []int{1, 1}, 3, 8, 0, "stop"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := newServer(t, fixtureHandler(t, tt.fixture))
			var s sample.Sample
			c.Send(testCtx(t), Request{Endpoint: tt.endpoint, Model: "m", Prompt: "hi", MaxTokens: 8}, &s)
			if s.Err != nil {
				t.Fatalf("Err = %v, want success", s.Err)
			}
			got := make([]int, len(s.Chunks))
			for i, ch := range s.Chunks {
				got[i] = ch.Tokens
			}
			if !slices.Equal(got, tt.wantTokens) {
				t.Errorf("chunk tokens = %v, want %v", got, tt.wantTokens)
			}
			if s.CompletionTokens != tt.wantN || s.PromptTokens != tt.wantPrompt || s.CachedTokens != tt.wantCached {
				t.Errorf("usage = (prompt %d, completion %d, cached %d), want (%d, %d, %d)",
					s.PromptTokens, s.CompletionTokens, s.CachedTokens, tt.wantPrompt, tt.wantN, tt.wantCached)
			}
			if s.FinishReason != tt.wantFinish {
				t.Errorf("FinishReason = %q, want %q", s.FinishReason, tt.wantFinish)
			}
			if s.Sent.IsZero() || s.Header.Before(s.Sent) || s.Done.Before(s.Header) {
				t.Errorf("times out of order: sent %v header %v done %v", s.Sent, s.Header, s.Done)
			}
			for i := 1; i < len(s.Chunks); i++ {
				if s.Chunks[i].At < s.Chunks[i-1].At {
					t.Errorf("chunk %d at %v before chunk %d at %v", i, s.Chunks[i].At, i-1, s.Chunks[i-1].At)
				}
			}
		})
	}
}

func TestRequestBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		req      Request
		wantPath string
		want     map[string]any // expected top-level fields (JSON-decoded)
		absent   []string       // fields that must not be sent
	}{
		// Chat with a system prompt: temperature 0 is sent, vLLM extras present.
		{
			name:     "chat with system",
			req:      Request{Model: "llama", System: "be brief", Prompt: "hello", MaxTokens: 64, MinTokens: 64, IgnoreEOS: true},
			wantPath: "/v1/chat/completions",
			want: map[string]any{
				"model": "llama", "max_tokens": 64.0, "min_tokens": 64.0, "ignore_eos": true, "temperature": 0.0, "stream": true,
				"messages": []any{
					map[string]any{"role": "system", "content": "be brief"},
					map[string]any{"role": "user", "content": "hello"},
				},
			},
		},
		// Chat without system prompt and without extras: only the user message;
		// min_tokens and ignore_eos are left out; a non-zero temperature is sent once.
		{
			name:     "chat minimal",
			req:      Request{Endpoint: Chat, Model: "llama", Prompt: "hello", MaxTokens: 8, Temperature: 0.7},
			wantPath: "/v1/chat/completions",
			want: map[string]any{
				"model": "llama", "max_tokens": 8.0, "temperature": 0.7, "stream": true,
				"messages": []any{map[string]any{"role": "user", "content": "hello"}},
			},
			absent: []string{"min_tokens", "ignore_eos"},
		},
		// Completions: prompt is System + Prompt.
		{
			name:     "completions",
			req:      Request{Endpoint: Completions, Model: "llama", System: "SYS ", Prompt: "go", MaxTokens: 16, MinTokens: 2},
			wantPath: "/v1/completions",
			want:     map[string]any{"model": "llama", "prompt": "SYS go", "max_tokens": 16.0, "min_tokens": 2.0, "temperature": 0.0, "stream": true},
			absent:   []string{"ignore_eos", "messages"},
		},
		// A model name go-openai treats as a reasoning model still gets max_tokens.
		{
			name:     "reasoning-like model name",
			req:      Request{Model: "o1-distill", Prompt: "x", MaxTokens: 5},
			wantPath: "/v1/chat/completions",
			want:     map[string]any{"model": "o1-distill", "max_tokens": 5.0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			fixture := "chat_vllm.sse"
			if tt.req.Endpoint == Completions {
				fixture = "completion_vllm.sse"
			}
			_, c := newServer(t, rec.wrap(fixtureHandler(t, fixture)), WithAPIKey("sk-test-123"))
			var s sample.Sample
			c.Send(testCtx(t), tt.req, &s)
			if s.Err != nil {
				t.Fatalf("Err = %v", s.Err)
			}
			got := rec.last(t)
			if got.path != tt.wantPath {
				t.Errorf("path = %q, want %q", got.path, tt.wantPath)
			}
			if got.auth != "Bearer sk-test-123" {
				t.Errorf("Authorization = %q, want the bearer key", got.auth)
			}
			if got.accept != "text/event-stream" {
				t.Errorf("Accept = %q, want text/event-stream", got.accept)
			}
			var body map[string]any
			if err := json.Unmarshal(got.body, &body); err != nil {
				t.Fatalf("body is not JSON: %v\n%s", err, got.body)
			}
			for k, want := range tt.want {
				if g, ok := body[k]; !ok || fmt.Sprint(g) != fmt.Sprint(want) {
					t.Errorf("body[%q] = %v (present %v), want %v", k, g, ok, want)
				}
			}
			for _, k := range tt.absent {
				if _, ok := body[k]; ok {
					t.Errorf("body has %q, want it absent", k)
				}
			}
			wantSO := map[string]any{"include_usage": true, "continuous_usage_stats": true}
			if fmt.Sprint(body["stream_options"]) != fmt.Sprint(wantSO) {
				t.Errorf("stream_options = %v, want %v", body["stream_options"], wantSO)
			}
			for _, k := range []string{"temperature", "max_tokens", "stream_options"} {
				if n := bytes.Count(got.body, []byte(`"`+k+`"`)); n != 1 {
					t.Errorf("key %q appears %d times in the body, want once", k, n)
				}
			}
		})
	}
}

func TestBaseURLNormalised(t *testing.T) {
	t.Parallel()
	rec := &recorder{}
	srv := httptest.NewServer(rec.wrap(fixtureHandler(t, "chat_vllm.sse")))
	t.Cleanup(srv.Close)
	tests := []struct {
		name string
		base string
	}{
		{"bare host", srv.URL},                 // http://127.0.0.1:port
		{"trailing slash", srv.URL + "/"},      // http://127.0.0.1:port/
		{"with /v1", srv.URL + "/v1"},          // already normalised
		{"with /v1/", srv.URL + "/v1/"},        // trailing slash after v1
		{"spaces", "  " + srv.URL + "/v1  \n"}, // pasted from a config file
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(tt.base)
			defer c.CloseIdleConnections()
			var s sample.Sample
			c.Send(testCtx(t), Request{Model: "m", Prompt: "p"}, &s)
			if s.Err != nil {
				t.Fatalf("Err = %v", s.Err)
			}
			if got, want := rec.last(t).path, "/v1/chat/completions"; got != want {
				t.Errorf("path = %q, want %q", got, want)
			}
		})
	}
}

func TestInvalidBaseURL(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	tests := []struct {
		name string
		base string
	}{
		{"no scheme", "127.0.0.1:8000"},         // parsed as scheme "127.0.0.1"
		{"bad scheme", "ftp://127.0.0.1:8000"},  // not http(s)
		{"no host", "http:///v1"},               // empty host
		{"unparseable", "http://[::1:8000/bad"}, // broken IPv6 literal
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(tt.base)
			var s sample.Sample
			c.Send(testCtx(t), Request{Model: "m", Prompt: "p"}, &s)
			if s.Err == nil || s.Err.Kind != sample.ErrConnection || !strings.Contains(s.Err.Message, "invalid base URL") {
				t.Fatalf("Err = %v, want connection error about the base URL", s.Err)
			}
			if s.Done.IsZero() {
				t.Error("Done not set")
			}
		})
	}
}

// chatEvent renders one vLLM chat chunk.
func chatEvent(content string, completionTokens int) string {
	return fmt.Sprintf(`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3,"total_tokens":%d,"completion_tokens":%d}}`+"\n\n",
		content, 3+completionTokens, completionTokens)
}

const (
	roleEvent   = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":3,"total_tokens":3,"completion_tokens":0}}` + "\n\n"
	finishEvent = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}],"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2}}` + "\n\n"
	usageEvent  = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"total_tokens":5,"completion_tokens":2}}` + "\n\n"
	doneEvent   = "data: [DONE]\n\n"
	errorEvent  = `data: {"error": {"object": "error", "message": "engine core died", "type": "InternalServerError", "param": null, "code": 500}}` + "\n\n"
)

// hold blocks a handler until the client goes away or 10 s pass. The body
// is read first: only then does net/http notice a client disconnect.
func hold(r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

func TestSendFailures(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	twoChunks := []string{roleEvent, chatEvent("a", 1), chatEvent("b", 2)}
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		opts       []Option
		wantKind   sample.ErrorKind
		wantStatus int
		wantMsg    string // substring of the message
		wantChunks int    // content chunks recorded before the failure
	}{
		// 500 before the stream, plain-text body.
		{
			name: "500 before stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "internal failure", http.StatusInternalServerError)
			},
			wantKind: sample.ErrHTTPStatus, wantStatus: 500, wantMsg: "internal failure",
		},
		// 400 with vLLM's JSON error body.
		{
			name: "400 with JSON error",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = fmt.Fprint(w, `{"error":{"message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}}`)
			},
			wantKind: sample.ErrHTTPStatus, wantStatus: 400, wantMsg: "max_tokens is too large",
		},
		// 429 is rate limiting, not a generic status error.
		{
			name: "429",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, `{"error":{"message":"slow down","type":"RateLimitError"}}`, http.StatusTooManyRequests)
			},
			wantKind: sample.ErrRateLimited, wantStatus: 429, wantMsg: "slow down",
		},
		// A redirect-like 3xx that is not followed is not a stream.
		{
			name: "304",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusNotModified)
			},
			wantKind: sample.ErrHTTPStatus, wantStatus: 304, wantMsg: "304",
		},
		// vLLM's error event in the middle of a stream.
		{
			name: "error event mid-stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				sendEvents(w, r, append(twoChunks[:3:3], errorEvent), 0)
			},
			wantKind: sample.ErrAPIEvent, wantMsg: "engine core died", wantChunks: 2,
		},
		// Stream ends cleanly with neither finish_reason nor usage.
		{
			name: "stream cut",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				sendEvents(w, r, twoChunks, 0)
			},
			wantKind: sample.ErrStreamCut, wantMsg: "without finish_reason and usage", wantChunks: 2,
		},
		// finish_reason and even [DONE] but no usage chunk: still not a success.
		{
			name: "no usage chunk",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				sendEvents(w, r, append(twoChunks[:3:3], finishEvent, doneEvent), 0)
			},
			wantKind: sample.ErrStreamCut, wantMsg: "without the usage chunk", wantChunks: 2,
		},
		// Usage chunk but no finish_reason.
		{
			name: "no finish_reason",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				sendEvents(w, r, append(twoChunks[:3:3], usageEvent, doneEvent), 0)
			},
			wantKind: sample.ErrStreamCut, wantMsg: "without finish_reason", wantChunks: 2,
		},
		// The connection drops in the middle of a chunked body.
		{
			name: "connection dropped mid-stream",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				sendEvents(w, r, twoChunks, 0)
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					_ = conn.Close()
				}
			},
			wantKind: sample.ErrConnection, wantChunks: 2,
		},
		// The server stalls after one content chunk; 100 ms idle timeout.
		{
			name: "stall past idle timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				sendEvents(w, r, twoChunks[:2], 0)
				hold(r)
			},
			opts:     []Option{WithIdleTimeout(100 * time.Millisecond)},
			wantKind: sample.ErrTimeout, wantMsg: "idle timeout", wantChunks: 1,
		},
		// Headers never come: the idle timeout covers the wait for them too.
		{
			name: "no headers",
			handler: func(w http.ResponseWriter, r *http.Request) {
				hold(r)
			},
			opts:     []Option{WithIdleTimeout(100 * time.Millisecond)},
			wantKind: sample.ErrTimeout, wantMsg: "idle timeout",
		},
		// A stream that keeps going past the whole-request timeout.
		{
			name: "request timeout",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				evs := []string{roleEvent}
				for i := 1; i <= 200; i++ {
					evs = append(evs, chatEvent("x", i))
				}
				sendEvents(w, r, evs, 20*time.Millisecond)
			},
			opts:     []Option{WithRequestTimeout(150 * time.Millisecond), WithIdleTimeout(time.Second)},
			wantKind: sample.ErrTimeout, wantMsg: "request timeout", wantChunks: -1,
		},
		// HTML instead of an event stream.
		{
			name: "not SSE",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				_, _ = fmt.Fprint(w, "<html><body>proxy login</body></html>")
			},
			wantKind: sample.ErrProtocol, wantMsg: "text/html",
		},
		// Event-stream content type, but the data is not JSON.
		{
			name: "garbage data",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				sendEvents(w, r, []string{roleEvent, "data: {this is not json\n\n"}, 0)
			},
			wantKind: sample.ErrProtocol, wantMsg: "event 2",
		},
		// An error sent as vLLM's bare ErrorResponse object, without the wrapper.
		{
			name: "bare error object",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				sendEvents(w, r, []string{roleEvent, `data: {"object":"error","message":"out of KV cache","type":"InternalServerError","param":null,"code":500}` + "\n\n"}, 0)
			},
			wantKind: sample.ErrAPIEvent, wantMsg: "out of KV cache",
		},
		// An error event go-openai cannot parse (error is a string).
		{
			name: "unparseable error event",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				sendEvents(w, r, []string{roleEvent, `data: {"error": "oops"}` + "\n\n"}, 0)
			},
			wantKind: sample.ErrProtocol, wantMsg: "does not parse",
		},
		// A valid chunk followed by junk on the same data line.
		{
			name: "data after JSON",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				sendEvents(w, r, []string{roleEvent, `data: {"choices":[]} {"x":1}` + "\n\n", usageEvent}, 0)
			},
			wantKind: sample.ErrProtocol, wantMsg: "data after the JSON value",
		},
		// Event-stream content type with no data lines at all.
		{
			name: "no data lines",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				_, _ = fmt.Fprint(w, strings.Repeat("garbage line\n", 400))
			},
			wantKind: sample.ErrProtocol, wantMsg: "non-data lines",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := newServer(t, tt.handler, tt.opts...)
			var s sample.Sample
			begin := time.Now()
			c.Send(testCtx(t), Request{Model: "m", Prompt: "p", MaxTokens: 16}, &s)
			if elapsed := time.Since(begin); elapsed > 5*time.Second {
				t.Errorf("Send took %v", elapsed)
			}
			if s.Err == nil {
				t.Fatalf("Err = nil, want %s", tt.wantKind)
			}
			if s.Err.Kind != tt.wantKind || s.Err.Status != tt.wantStatus {
				t.Errorf("Err = %v, want kind %s status %d", s.Err, tt.wantKind, tt.wantStatus)
			}
			if !strings.Contains(s.Err.Message, tt.wantMsg) {
				t.Errorf("message %q does not contain %q", s.Err.Message, tt.wantMsg)
			}
			if tt.wantChunks >= 0 && len(s.Chunks) != tt.wantChunks {
				t.Errorf("got %d chunks, want %d", len(s.Chunks), tt.wantChunks)
			}
			if s.OK() {
				t.Error("OK() = true for a failed request")
			}
			if _, ok := s.TTFT(); ok {
				t.Error("TTFT ok for a failed request")
			}
			if s.Done.Before(s.Sent) {
				t.Errorf("Done %v before Sent %v", s.Done, s.Sent)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	c := New("http://" + addr)
	var s sample.Sample
	c.Send(testCtx(t), Request{Model: "m", Prompt: "p"}, &s)
	if s.Err == nil || s.Err.Kind != sample.ErrConnection {
		t.Fatalf("Err = %v, want connection error", s.Err)
	}
	if !s.Header.IsZero() {
		t.Errorf("Header = %v, want zero (no response)", s.Header)
	}
}

func TestContextCanceledMidStream(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	sent := make(chan struct{})
	_, c := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w)
		sendEvents(w, r, []string{roleEvent, chatEvent("a", 1)}, 0)
		close(sent)
		hold(r)
	}))
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() {
		<-sent
		time.Sleep(20 * time.Millisecond) // let the client read the chunk
		cancel()
	}()
	var s sample.Sample
	c.Send(ctx, Request{Model: "m", Prompt: "p"}, &s)
	if s.Err == nil || s.Err.Kind != sample.ErrCanceled {
		t.Fatalf("Err = %v, want canceled", s.Err)
	}
	if len(s.Chunks) != 1 {
		t.Errorf("got %d chunks, want the 1 that arrived before cancel", len(s.Chunks))
	}
}

func TestCallerDeadlineIsTimeout(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	_, c := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w)
		sendEvents(w, r, []string{roleEvent}, 0)
		hold(r)
	}))
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	var s sample.Sample
	c.Send(ctx, Request{Model: "m", Prompt: "p"}, &s)
	if s.Err == nil || s.Err.Kind != sample.ErrTimeout || !strings.Contains(s.Err.Message, "deadline") {
		t.Fatalf("Err = %v, want timeout from the caller's deadline", s.Err)
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	const key = "sk-secret-4242424242"
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		// A 401 whose JSON message echoes the Authorization header.
		{"401 JSON echo", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = fmt.Fprintf(w, `{"error":{"message":"bad header %s","type":"Unauthorized"}}`, r.Header.Get("Authorization"))
		}},
		// A plain-text 403 echoing the key, long enough to be cut.
		{"403 text echo", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, strings.Repeat("x", maxErrorBody-5)+r.Header.Get("Authorization"), http.StatusForbidden)
		}},
		// A non-SSE 200 echoing it.
		{"html echo", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = fmt.Fprint(w, r.Header.Get("Authorization"))
		}},
		// An error event echoing it.
		{"error event echo", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w)
			sendEvents(w, r, []string{fmt.Sprintf(`data: {"error":{"message":"key %s rejected","type":"x"}}`+"\n\n", r.Header.Get("Authorization"))}, 0)
		}},
		// Garbage data echoing it.
		{"garbage echo", func(w http.ResponseWriter, r *http.Request) {
			writeSSE(w)
			sendEvents(w, r, []string{"data: <" + r.Header.Get("Authorization") + ">\n\n"}, 0)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := newServer(t, tt.handler, WithAPIKey(key))
			var s sample.Sample
			c.Send(testCtx(t), Request{Model: "m", Prompt: "p"}, &s)
			if s.Err == nil {
				t.Fatal("Err = nil, want a failure")
			}
			for _, part := range []string{key, key[:12], key[len(key)-8:]} {
				if strings.Contains(s.Err.Error(), part) {
					t.Fatalf("error leaks the key (%q): %v", part, s.Err)
				}
			}
		})
	}
}

func TestTimingMetrics(t *testing.T) {
	testphase.Timed(t)
	t.Parallel()
	// The server keeps an absolute schedule from when it saw the request: a
	// role-only chunk at once, 5 content chunks at 60 ms + i·25 ms carrying
	// 1, 2, 2, 2, 2 tokens (n = 9, as with speculative decoding), then the
	// finish, usage and [DONE] events a long 300 ms later.
	const (
		first  = 60 * time.Millisecond
		gap    = 25 * time.Millisecond
		chunks = 5
		n      = 9
		tail   = 300 * time.Millisecond
	)
	cumulative := []int{1, 3, 5, 7, 9}
	_, c := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		writeSSE(w)
		fl := w.(http.Flusher)
		_, _ = fmt.Fprint(w, roleEvent)
		fl.Flush()
		for i := 0; i < chunks; i++ {
			time.Sleep(time.Until(t0.Add(first + time.Duration(i)*gap)))
			_, _ = fmt.Fprint(w, chatEvent("tt", cumulative[i]))
			fl.Flush()
		}
		time.Sleep(tail)
		_, _ = fmt.Fprint(w, strings.Replace(finishEvent, `"completion_tokens":2`, `"completion_tokens":9`, 1))
		_, _ = fmt.Fprint(w, strings.Replace(usageEvent, `"completion_tokens":2`, `"completion_tokens":9`, 1))
		_, _ = fmt.Fprint(w, doneEvent)
	}))
	var s sample.Sample
	c.Send(testCtx(t), Request{Model: "m", Prompt: "p", MaxTokens: n}, &s)
	if s.Err != nil {
		t.Fatalf("Err = %v", s.Err)
	}
	if len(s.Chunks) != chunks || s.CompletionTokens != n {
		t.Fatalf("chunks %d, n %d, want %d and %d", len(s.Chunks), s.CompletionTokens, chunks, n)
	}
	const slack = 250 * time.Millisecond // a loaded 2-core machine; less than tail
	ttft, _ := s.TTFT()
	e2el, _ := s.E2EL()
	tpot, ok := s.TPOT()
	if !ok {
		t.Fatal("TPOT not ok")
	}
	wantE2EL := first + (chunks-1)*gap
	// The schedule starts after Sent, so the measured times cannot be
	// shorter. A TTFT near 0 would mean the role-only chunk was counted; an
	// E2EL past wantE2EL+slack would mean the usage chunk or [DONE] was.
	if ttft < first || ttft > first+slack {
		t.Errorf("TTFT = %v, want in [%v, %v]", ttft, first, first+slack)
	}
	if e2el < wantE2EL || e2el > wantE2EL+slack {
		t.Errorf("E2EL = %v, want in [%v, %v]", e2el, wantE2EL, wantE2EL+slack)
	}
	// TPOT divides by n-1 = 8 from usage, not by the chunk count.
	if want := (e2el - ttft) / (n - 1); tpot != want {
		t.Errorf("TPOT = %v, want (E2EL-TTFT)/(n-1) = %v", tpot, want)
	}
	if maxTPOT := ((chunks-1)*gap + slack) / (n - 1); tpot <= 0 || tpot > maxTPOT {
		t.Errorf("TPOT = %v, want in (0, %v]", tpot, maxTPOT)
	}
	if hdr := s.Header.Sub(s.Sent); hdr < 0 || hdr > ttft {
		t.Errorf("headers at %v, want between Sent and TTFT %v", hdr, ttft)
	}
	if done := s.Done.Sub(s.Sent); done < wantE2EL+tail {
		t.Errorf("Done at %v, want after the tail at %v", done, wantE2EL+tail)
	}
	if itls := s.ITLs(nil); len(itls) != chunks-1 {
		t.Errorf("got %d ITLs, want %d", len(itls), chunks-1)
	}
	got := make([]int, len(s.Chunks))
	for i, ch := range s.Chunks {
		got[i] = ch.Tokens
	}
	if want := []int{1, 2, 2, 2, 2}; !slices.Equal(got, want) {
		t.Errorf("chunk tokens = %v, want %v", got, want)
	}
}

// countConns counts the connections a test server accepts.
func countConns(srv *httptest.Server) *atomic.Int64 {
	var n atomic.Int64
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

func TestConnectionsReused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		concurrent int
		rounds     int
		opts       []Option
		// Connections the server may accept. Go's transport gives up reusing
		// a connection when its write loop is slow to report (50 ms), which
		// happens on a loaded machine, so a little slack is allowed above the
		// ideal; the failures this guards against are far outside it.
		minConns, maxConns int64
	}{
		// Sequential requests share one connection: the body is drained after
		// [DONE] (without the drain every request would dial: 10).
		{"sequential", 1, 10, nil, 1, 3},
		// 8 concurrent streams, 3 rounds: the default pool keeps all 8 (Go's
		// default MaxIdleConnsPerHost=2 would re-dial 6 per round: 20).
		{"concurrent default", 8, 3, nil, 8, 11},
		// An explicit pool size as large as the concurrency does the same.
		{"concurrent sized", 8, 3, []Option{WithMaxConnections(8)}, 8, 11},
		// The pitfall this guards against: Go's default transport keeps 2 idle
		// connections per host, so each later round re-dials 6: 8+6+6.
		{"go default transport churns", 8, 3, []Option{WithHTTPClient(&http.Client{Transport: &http.Transport{}})}, 20, 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			events := fixtureEvents(t, "chat_vllm.sse")
			var started sync.WaitGroup
			var gate chan struct{}
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				started.Done()
				<-gate // all streams of a round are open at once
				writeSSE(w)
				sendEvents(w, r, events, 0)
			}))
			conns := countConns(srv)
			srv.Start()
			c := New(srv.URL, tt.opts...)
			t.Cleanup(func() { c.CloseIdleConnections(); srv.Close() })
			for round := 0; round < tt.rounds; round++ {
				gate = make(chan struct{})
				started.Add(tt.concurrent)
				var wg sync.WaitGroup
				samples := make([]sample.Sample, tt.concurrent)
				for i := range samples {
					wg.Go(func() { c.Send(testCtx(t), Request{Model: "m", Prompt: "p"}, &samples[i]) })
				}
				started.Wait()
				close(gate)
				wg.Wait()
				for i := range samples {
					if samples[i].Err != nil {
						t.Fatalf("round %d request %d: %v", round, i, samples[i].Err)
					}
				}
			}
			if got := conns.Load(); got < tt.minConns || got > tt.maxConns {
				t.Errorf("server accepted %d connections, want %d to %d", got, tt.minConns, tt.maxConns)
			}
		})
	}
}

func TestWithMaxConnectionsSizesTransport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts []Option
		want int
	}{
		{"default", nil, DefaultMaxConnections},                                  // no option
		{"explicit", []Option{WithMaxConnections(2000)}, 2000},                   // beyond the default
		{"clamped", []Option{WithMaxConnections(0)}, 1},                          // n < 1
		{"last wins", []Option{WithMaxConnections(5), WithMaxConnections(7)}, 7}, // options apply in order
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New("http://127.0.0.1:1", tt.opts...)
			tr, ok := c.httpClient.Transport.(*http.Transport)
			if !ok {
				t.Fatalf("transport is %T", c.httpClient.Transport)
			}
			if tr.MaxIdleConnsPerHost != tt.want || tr.MaxIdleConns != tt.want || tr.MaxConnsPerHost != 0 {
				t.Errorf("idle per host %d, idle %d, max per host %d; want %d, %d, 0",
					tr.MaxIdleConnsPerHost, tr.MaxIdleConns, tr.MaxConnsPerHost, tt.want, tt.want)
			}
		})
	}
}

func TestWithHTTPClientIsUsed(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(fixtureHandler(t, "chat_vllm.sse"))
	t.Cleanup(srv.Close)
	var used atomic.Int64
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used.Add(1)
		return base.RoundTrip(r)
	})}
	c := New(srv.URL, WithHTTPClient(hc))
	var s sample.Sample
	c.Send(testCtx(t), Request{Model: "m", Prompt: "p"}, &s)
	if s.Err != nil {
		t.Fatalf("Err = %v", s.Err)
	}
	if used.Load() != 1 {
		t.Errorf("custom client used %d times, want 1", used.Load())
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestInvalidRequest(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	rec := &recorder{}
	_, c := newServer(t, rec.wrap(fixtureHandler(t, "chat_vllm.sse")))
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"unknown endpoint", Request{Endpoint: "score", Model: "m"}, "unknown endpoint"},                    // not chat, completions, embeddings or rerank
		{"NaN temperature", Request{Model: "m", Temperature: nan()}, "temperature must be a finite number"}, // cannot be encoded
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s sample.Sample
			c.Send(testCtx(t), tt.req, &s)
			if s.Err == nil || s.Err.Kind != sample.ErrProtocol || !strings.Contains(s.Err.Message, tt.want) {
				t.Fatalf("Err = %v, want protocol error containing %q", s.Err, tt.want)
			}
		})
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) != 0 {
		t.Errorf("server saw %d requests, want none", len(rec.reqs))
	}
}

func nan() float64 {
	zero := 0.0
	return zero / zero
}

func TestSampleReused(t *testing.T) {
	t.Parallel()
	_, c := newServer(t, fixtureHandler(t, "chat_vllm.sse"))
	s := sample.Sample{Index: 7, Warmup: true, Err: &sample.Error{Kind: sample.ErrTimeout}, FinishReason: "old",
		Chunks: []sample.Chunk{{At: time.Hour, Tokens: 9}}}
	c.Send(testCtx(t), Request{Model: "m", Prompt: "p"}, &s)
	if s.Err != nil || s.FinishReason != "length" || len(s.Chunks) != 4 || s.Chunks[0].At == time.Hour {
		t.Errorf("stale fields kept: err %v finish %q chunks %v", s.Err, s.FinishReason, s.Chunks)
	}
	if s.Index != 7 || !s.Warmup {
		t.Errorf("caller's fields changed: index %d warmup %v", s.Index, s.Warmup)
	}
}
