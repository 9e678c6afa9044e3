package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The tests in this file are the client's rows of docs/reliability.md.

// paddedChatEvent is a valid content event whose data line (without its
// line end) is exactly n bytes long: the JSON is padded with spaces.
func paddedChatEvent(t testing.TB, n int) string {
	t.Helper()
	line := strings.TrimSuffix(chatEvent("a", 1), "\n\n")
	if len(line) > n {
		t.Fatalf("event line is %d bytes, cannot pad it to %d", len(line), n)
	}
	return line[:len(line)-1] + strings.Repeat(" ", n-len(line)) + "}" + "\n\n"
}

// streamHandler writes parts one after the other, flushing each.
func streamHandler(parts ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w)
		sendEvents(w, r, parts, 0)
	}
}

// bigLine writes "data: " and then n bytes of x, with no line end, in 64 KiB
// writes, stopping when the client goes away.
func bigLine(n int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w)
		_, _ = fmt.Fprint(w, roleEvent, "data: ")
		block := []byte(strings.Repeat("x", 64<<10))
		for sent := 0; sent < n; sent += len(block) {
			if _, err := w.Write(block); err != nil {
				return
			}
		}
	}
}

func TestRow05_OversizedSSEEvent(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	const limit = 64 << 10
	complete := []string{roleEvent, chatEvent("a", 1), chatEvent("b", 2), finishEvent, usageEvent}
	tests := []struct {
		name       string
		handler    http.HandlerFunc
		opts       []Option
		wantKind   sample.ErrorKind // "" means success
		wantMsg    string
		wantChunks int
	}{
		// An event line exactly at the cap is accepted.
		{
			name:       "event at the cap",
			handler:    streamHandler(roleEvent, paddedChatEvent(t, limit), finishEvent, usageEvent, doneEvent),
			opts:       []Option{WithMaxEventSize(limit)},
			wantChunks: 1,
		},
		// One byte more fails the request as a protocol error naming the cap.
		{
			name:     "event one byte over the cap",
			handler:  streamHandler(roleEvent, paddedChatEvent(t, limit+1), finishEvent, usageEvent, doneEvent),
			opts:     []Option{WithMaxEventSize(limit)},
			wantKind: sample.ErrProtocol, wantMsg: "SSE event exceeds 64 KiB",
		},
		// The chunks before the oversized event are kept.
		{
			name:     "oversized after two chunks",
			handler:  streamHandler(roleEvent, chatEvent("a", 1), chatEvent("b", 2), paddedChatEvent(t, 3*limit)),
			opts:     []Option{WithMaxEventSize(limit)},
			wantKind: sample.ErrProtocol, wantMsg: "SSE event exceeds 64 KiB (line 7", wantChunks: 2,
		},
		// A line that never ends (the 50 MB line, here 2 MiB) is cut
		// at the cap, not read to the end and counted as a success.
		{
			name:     "endless line",
			handler:  bigLine(2 << 20),
			opts:     []Option{WithMaxEventSize(limit)},
			wantKind: sample.ErrProtocol, wantMsg: "SSE event exceeds 64 KiB",
		},
		// The default cap is DefaultMaxEventSize, 4 MiB.
		{
			name:     "default cap",
			handler:  bigLine(5 << 20),
			wantKind: sample.ErrProtocol, wantMsg: "SSE event exceeds 4 MiB",
		},
		// A stream that ends inside a line is reported as such, not as a
		// stream that ended without finish_reason.
		{
			name:     "unterminated final line",
			handler:  streamHandler(roleEvent, chatEvent("a", 1), `data: {"choices":[{"index":0,"delta":{"content":"b"}`),
			wantKind: sample.ErrProtocol, wantMsg: "stream ended inside an unterminated line (52 bytes without a line end, after 4 complete lines)", wantChunks: 1,
		},
		// A complete stream whose final [DONE] lacks its line end is fine.
		{
			name:       "unterminated [DONE]",
			handler:    streamHandler(append(complete, "data: [DONE]")...),
			wantChunks: 2,
		},
		// Trailing blanks without a line end are fine too.
		{
			name:       "unterminated blanks",
			handler:    streamHandler(append(complete, doneEvent, "  ")...),
			wantChunks: 2,
		},
		// Non-data lines (comments) each under the cap but together over it:
		// go-openai keeps them all, so they are bounded too.
		{
			name: "non-data lines over the cap in total",
			handler: func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				comment := ": " + strings.Repeat("k", 10000) + "\n"
				for range 10 { // 100 KB of comments, between data lines (fewer than max_tokens' bound)
					if _, err := fmt.Fprint(w, chatEvent("a", 1), comment); err != nil {
						return
					}
				}
			},
			opts:     []Option{WithMaxEventSize(limit)},
			wantKind: sample.ErrProtocol, wantMsg: "lines that are not data: lines", wantChunks: -1,
		},
		// WithMaxEventSize(0) removes the cap: a long event goes through.
		{
			name:       "cap removed",
			handler:    streamHandler(roleEvent, paddedChatEvent(t, 5<<20), finishEvent, usageEvent, doneEvent),
			opts:       []Option{WithMaxEventSize(0)},
			wantChunks: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := newServer(t, tt.handler, tt.opts...)
			var s sample.Sample
			c.Send(testCtx(t), Request{Model: "m", Prompt: "p", MaxTokens: 2}, &s)
			switch {
			case tt.wantKind == "" && s.Err != nil:
				t.Fatalf("Err = %v, want success", s.Err)
			case tt.wantKind != "" && (s.Err == nil || s.Err.Kind != tt.wantKind || !strings.Contains(s.Err.Message, tt.wantMsg)):
				t.Fatalf("Err = %v, want %s containing %q", s.Err, tt.wantKind, tt.wantMsg)
			}
			if tt.wantChunks >= 0 && len(s.Chunks) != tt.wantChunks {
				t.Errorf("got %d chunks, want %d", len(s.Chunks), tt.wantChunks)
			}
		})
	}
}

// countingTransport counts the response body bytes the client reads.
type countingTransport struct {
	base http.RoundTripper
	read atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// TestRow05_OversizedEventReadIsBounded checks that the client stops
// reading an endless line at the cap: what it reads, and so what it can
// buffer, does not grow with what the server sends.
func TestRow05_OversizedEventReadIsBounded(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	const limit = 256 << 10
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	ct := &countingTransport{base: base}
	_, c := newServer(t, bigLine(64<<20), WithMaxEventSize(limit), WithHTTPClient(&http.Client{Transport: ct}))
	var s sample.Sample
	c.Send(testCtx(t), Request{Model: "m", Prompt: "p"}, &s)
	if s.Err == nil || s.Err.Kind != sample.ErrProtocol {
		t.Fatalf("Err = %v, want a protocol error", s.Err)
	}
	// The cap plus at most one read buffer of each layer beyond it.
	if got, most := ct.read.Load(), int64(limit+64<<10); got > most {
		t.Errorf("client read %d bytes of the 64 MiB line, want at most %d", got, most)
	}
}

// TestEventReader drives eventReader directly with reads of every size
// down to one byte, where line ends fall across reads.
func TestEventReader(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		max     int
		wantErr string // "" means io.EOF after all input
	}{
		// Lines at the cap pass; blank lines and [DONE] too.
		{"at cap", "data: 123456\n\ndata: 7890ab\n\ndata: [DONE]\n\n", 12, ""},
		// A line one byte over fails.
		{"over cap", "data: 123456\n\ndata: 7890abc\n\n", 12, "SSE event exceeds 12 bytes (line 3"},
		// CRLF line ends: the blank "\r" lines are not counted as non-data.
		{"crlf", strings.Repeat("data: 1\r\n\r\n", 50), 8, ""},
		// Comment lines add up.
		{"comments", ": 1234\n: 1234\n", 10, "more than 10 bytes of lines that are not data"},
		// Unterminated line at the end.
		{"unterminated", "data: 1\n\ndata: {", 100, "unterminated line (7 bytes without a line end, after 2 complete lines)"},
		// Unterminated [DONE] with spaces.
		{"unterminated done", "data: 1\n\n data:[DONE] ", 100, ""},
		// No cap: a long line passes.
		{"no cap", "data: " + strings.Repeat("x", 1000) + "\n", 0, ""},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte", iotest.OneByteReader},
		{"half", iotest.HalfReader},
	}
	for _, tt := range tests {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				t.Parallel()
				e := newEventReader(io.NopCloser(rd.wrap(strings.NewReader(tt.in))), tt.max)
				got, err := io.ReadAll(e)
				if tt.wantErr == "" {
					if err != nil {
						t.Fatalf("err = %v, want none", err)
					}
					if string(got) != tt.in {
						t.Errorf("read %q, want %q", got, tt.in)
					}
					return
				}
				var pe *protocolError
				if !errors.As(err, &pe) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want a protocol error containing %q", err, tt.wantErr)
				}
				if _, again := e.Read(make([]byte, 8)); again != err {
					t.Errorf("second Read = %v, want the same error", again)
				}
			})
		}
	}
}

func TestRow06_ContextLengthMessageKept(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	const msg = "This model's maximum context length is 4096 tokens. However, you requested 5128 tokens (5000 in the messages, 128 in the completion). Please reduce the length of the messages or completion."
	tests := []struct {
		name string
		body string
	}{
		// vLLM's current error body, wrapped in "error".
		{"wrapped", fmt.Sprintf(`{"error":{"message":%q,"type":"BadRequestError","param":null,"code":400}}`, msg)},
		// Older vLLM: the bare ErrorResponse object.
		{"bare", fmt.Sprintf(`{"object":"error","message":%q,"type":"BadRequestError","param":null,"code":400}`, msg)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = fmt.Fprint(w, tt.body)
			}))
			var s sample.Sample
			c.Send(testCtx(t), Request{Model: "m", Prompt: "p", MaxTokens: 128}, &s)
			if s.Err == nil || s.Err.Kind != sample.ErrHTTPStatus || s.Err.Status != 400 {
				t.Fatalf("Err = %v, want http_status 400", s.Err)
			}
			if !strings.Contains(s.Err.Message, "maximum context length is 4096 tokens") {
				t.Errorf("message %q lost vLLM's explanation", s.Err.Message)
			}
		})
	}
}

func TestRow06_MaxModelLen(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	const key = "sk-models-777"
	tests := []struct {
		name    string
		status  int
		body    string
		model   string
		wantN   int
		wantOK  bool
		wantErr string // substring; "" means no error
		wantIs  error
	}{
		// vLLM's list: max_model_len on each model object.
		{"vllm", 200, `{"object":"list","data":[{"id":"other","object":"model","max_model_len":8192},{"id":"Qwen/Qwen3-0.6B","object":"model","owned_by":"vllm","root":"Qwen/Qwen3-0.6B","parent":null,"max_model_len":4096}]}`, "Qwen/Qwen3-0.6B", 4096, true, "", nil},
		// A server that does not report it (OpenAI, most proxies).
		{"absent", 200, `{"object":"list","data":[{"id":"m","object":"model"}]}`, "m", 0, false, "", nil},
		// Reported as null.
		{"null", 200, `{"data":[{"id":"m","max_model_len":null}]}`, "m", 0, false, "", nil},
		// The model is not in the list: the error names what is.
		{"not served", 200, `{"data":[{"id":"b"},{"id":"a"}]}`, "m", 0, false, `does not serve "m" (it serves "a", "b")`, nil},
		// Not a model list.
		{"not JSON", 200, `<html>login</html>`, "m", 0, false, "is not an OpenAI model list", nil},
		// A wrong key: an error wrapping ErrKeyRejected, without the key.
		{"401", 401, `{"error":"bad key ` + key + `"}`, "m", 0, false, "401 Unauthorized", ErrKeyRejected},
		{"403", 403, ``, "m", 0, false, "403 Forbidden", ErrKeyRejected},
		// Some other status: named, with the body.
		{"404", 404, `no such route`, "m", 0, false, `404 Not Found, body "no such route"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := &recorder{}
			_, c := newServer(t, rec.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = fmt.Fprint(w, tt.body)
			})), WithAPIKey(key))
			n, ok, err := c.MaxModelLen(testCtx(t), tt.model)
			if got := rec.last(t); got.path != "/v1/models" || got.auth != "Bearer "+key {
				t.Errorf("request %s with Authorization %q, want /v1/models with the key", got.path, got.auth)
			}
			if n != tt.wantN || ok != tt.wantOK {
				t.Errorf("MaxModelLen = %d, %v, want %d, %v", n, ok, tt.wantN, tt.wantOK)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			case tt.wantIs != nil && !errors.Is(err, tt.wantIs):
				t.Errorf("err = %v, want errors.Is %v", err, tt.wantIs)
			case err != nil && strings.Contains(err.Error(), key):
				t.Errorf("error leaks the key: %v", err)
			}
		})
	}
}

func TestRow09_KeyRejected(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	tests := []struct {
		name       string
		status     int
		body       string
		wantKind   sample.ErrorKind
		wantStatus int
	}{
		// vLLM with --api-key answers a wrong key with 401 {"error": "Unauthorized"}.
		{"vllm 401", 401, `{"error": "Unauthorized"}`, sample.ErrAuth, 401},
		// A gateway that forbids instead.
		{"gateway 403", 403, `{"error":{"message":"invalid key","type":"auth"}}`, sample.ErrAuth, 403},
		// 400 stays a plain status error.
		{"400 is not auth", 400, `{"error":{"message":"bad","type":"BadRequestError"}}`, sample.ErrHTTPStatus, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = fmt.Fprint(w, tt.body)
			}), WithAPIKey("sk-wrong"))
			var s sample.Sample
			c.Send(testCtx(t), Request{Model: "m", Prompt: "p"}, &s)
			if s.Err == nil || s.Err.Kind != tt.wantKind || s.Err.Status != tt.wantStatus {
				t.Fatalf("Err = %v, want %s with status %d", s.Err, tt.wantKind, tt.wantStatus)
			}
			if err := c.Preconnect(testCtx(t), 1); tt.wantKind == sample.ErrAuth && !errors.Is(err, ErrKeyRejected) {
				t.Errorf("Preconnect = %v, want ErrKeyRejected", err)
			}
		})
	}
	// The advice is one message, naming where the key came from.
	if got, want := KeyAdvice("$WRONGKEY"), "the server rejected the key from $WRONGKEY"; !strings.HasPrefix(got, want) {
		t.Errorf("KeyAdvice = %q, want it to start %q", got, want)
	}
	if got := KeyAdvice(""); !strings.Contains(got, "none was sent") {
		t.Errorf("KeyAdvice without a key = %q", got)
	}
}

// TestModelsInvalidBase checks Models on a malformed base URL.
func TestModelsInvalidBase(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	_, err := New("ftp://x").Models(context.Background())
	if err == nil || !strings.Contains(err.Error(), "invalid base URL") {
		t.Errorf("err = %v, want invalid base URL", err)
	}
}
