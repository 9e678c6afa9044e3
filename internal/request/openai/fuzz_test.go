package openai

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// streamTransport answers every request with an SSE response whose body
// is body, without a network.
type streamTransport struct{ body []byte }

func (s streamTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Status: "200 OK", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(bytes.NewReader(s.body)),
		Request: r,
	}, nil
}

// FuzzStream feeds a request arbitrary SSE streams, seeded with the
// recorded vLLM streams (testdata/*.sse) and testdata/fuzz/FuzzStream (a
// stream past max_tokens, an error event, a line cut short): the request
// ends, never panics, and a stream it accepts has a finish reason, a
// usage of at most max_tokens and its usageSlack (a miscount the counter
// reconciliation judges) and no chunk before the request was sent.
func FuzzStream(f *testing.F) {
	names, _ := filepath.Glob("testdata/*.sse")
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	const maxTokens = 8
	f.Fuzz(func(t *testing.T, b []byte) {
		c := New("http://127.0.0.1:1", WithHTTPClient(&http.Client{Transport: streamTransport{b}}), WithMaxEventSize(64<<10), WithIdleTimeout(0))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var s sample.Sample
		c.Send(ctx, Request{Model: "m", Prompt: "p", MaxTokens: maxTokens}, &s)
		if s.Err != nil {
			return
		}
		if s.FinishReason == "" || s.CompletionTokens > maxTokens+usageSlack {
			t.Fatalf("accepted a stream with finish reason %q and %d completion tokens", s.FinishReason, s.CompletionTokens)
		}
		for _, ch := range s.Chunks {
			if ch.At < 0 || ch.Tokens < 0 {
				t.Fatalf("chunk %+v", ch)
			}
		}
	})
}
