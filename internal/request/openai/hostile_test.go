package openai

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The hostile servers of issue 50, the client's rows of docs/reliability.md.

// endlessBody answers status with a body that never ends, in 64 KiB
// writes, until the client goes away.
func endlessBody(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		block := []byte(strings.Repeat("x", 64<<10))
		for {
			if _, err := w.Write(block); err != nil {
				return
			}
		}
	}
}

// TestRow50_EndlessErrorBody: a 500 whose body never ends fails the
// request by its status after at most maxErrorRead bytes (and a read
// buffer) of the body; go-openai never reads the rest.
func TestRow50_EndlessErrorBody(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	ct := &countingTransport{base: base}
	_, c := newServer(t, endlessBody(http.StatusInternalServerError), WithHTTPClient(&http.Client{Transport: ct}))
	var s sample.Sample
	c.Send(testCtx(t), Request{Model: "m", Prompt: "p", MaxTokens: 4}, &s)
	if s.Err == nil || s.Err.Kind != sample.ErrHTTPStatus || s.Err.Status != 500 {
		t.Fatalf("Err = %v, want http_status 500", s.Err)
	}
	if got, most := ct.read.Load(), int64(maxErrorRead+64<<10); got > most {
		t.Errorf("client read %d bytes of the endless body, want at most %d", got, most)
	}
}

// TestRow50_StreamPastMaxTokens: a server that keeps streaming past
// max_tokens fails the request with kind overlong, by its usage or, without
// usage, by its chunk count, instead of being read to the request timeout.
func TestRow50_StreamPastMaxTokens(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	noUsage := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}` + "\n\n"
	tests := []struct {
		name  string
		event func(i int) string
		want  string
	}{
		{"usage counts past it", func(i int) string { return chatEvent("a", i+1) }, "reported 21 completion tokens, more than max_tokens 4"},
		{"no usage", func(int) string { return noUsage }, "streamed 25 content chunks for max_tokens 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			endless := func(w http.ResponseWriter, r *http.Request) {
				writeSSE(w)
				fl := w.(http.Flusher)
				_, _ = fmt.Fprint(w, roleEvent)
				for i := 0; ; i++ {
					if _, err := fmt.Fprint(w, tt.event(i)); err != nil {
						return
					}
					fl.Flush()
				}
			}
			_, c := newServer(t, http.HandlerFunc(endless))
			var s sample.Sample
			c.Send(testCtx(t), Request{Model: "m", Prompt: "p", MaxTokens: 4}, &s)
			if s.Err == nil || s.Err.Kind != sample.ErrOverlong || !strings.Contains(s.Err.Message, tt.want) {
				t.Fatalf("Err = %v, want overlong: %s", s.Err, tt.want)
			}
		})
	}
}

// TestRow50_EchoedGatewayHeader: a server that echoes the request's
// headers in its error body leaves no gateway header value, nor the API
// key, in the request's error.
func TestRow50_EchoedGatewayHeader(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	const secret = "gw-s3cret-Value"
	g, err := gateway.Config{Headers: []gateway.Header{{Name: "X-Gw-Token", Value: "env:GWTOKEN"}}}.Load(func(string) (string, bool) { return secret, true })
	if err != nil {
		t.Fatal(err)
	}
	echo := func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusUnauthorized
		if r.URL.Path == "/v1/models" {
			status = http.StatusInternalServerError
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"headers: %s %s"}}`, r.Header.Get("X-Gw-Token"), r.Header.Get("Authorization"))
	}
	_, c := newServer(t, http.HandlerFunc(echo), WithHTTPClient(g.Client(1)), WithAPIKey("sk-key"))
	var s sample.Sample
	c.Send(testCtx(t), Request{Model: "m", Prompt: "p"}, &s)
	_, merr := c.Models(testCtx(t))
	for name, msg := range map[string]string{"Send": fmt.Sprint(s.Err), "Models": fmt.Sprint(merr)} {
		if strings.Contains(msg, secret) || strings.Contains(msg, "sk-key") || !strings.Contains(msg, "[REDACTED]") {
			t.Errorf("%s: %s: a secret shows, or nothing was redacted", name, msg)
		}
	}
}
