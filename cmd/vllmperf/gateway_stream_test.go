package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/simtest"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// TestGatewayStreamsWhole: streamed chat completions through a reverse
// proxy wrapped in simtest.FullDuplex (as simtest.StreamingProxy is) arrive whole, even
// when the proxy's transport reads the end of the request body only after
// the simulator's answer has begun to flow back. That late read is what a
// busy machine produces now and then (about 1 stream in 40 under `vllmperf
// run` on 2 shared cores); here lateEOF forces it on every request, so
// without FullDuplex every stream is cut with "unexpected EOF" (the proxy
// logs "use of closed network connection", golang/go#40747).
func TestGatewayStreamsWhole(t *testing.T) {
	testphase.Fault(t)
	sim, err := url.Parse(startSim(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(sim)
	proxy.FlushInterval = -1
	ts := httptest.NewServer(simtest.FullDuplex(lateEOF(proxy)))
	t.Cleanup(ts.Close)
	client := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	t.Cleanup(client.CloseIdleConnections)

	const streams = 8
	for i := range streams {
		if err := streamChat(client, ts.URL); err != nil {
			t.Fatalf("stream %d of %d through the proxy: %v", i+1, streams, err)
		}
	}
}

// streamChat sends one streamed chat completion to base and reads it to
// the end: it fails unless the stream ends cleanly after data: [DONE].
func streamChat(client *http.Client, base string) error {
	body := `{"model":"Qwen/Qwen3-0.6B","messages":[{"role":"user","content":"Tell me about the sea."}],"max_tokens":4,"stream":true}`
	resp, err := client.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		done = done || sc.Text() == "data: [DONE]"
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("stream cut (after [DONE]: %v): %w", done, err)
	}
	if !done {
		return errors.New("stream ended without data: [DONE]")
	}
	return nil
}

// lateEOF holds back the end of each request body h reads (the read after
// the declared Content-Length) until h has flushed its response headers.
func lateEOF(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength <= 0 {
			h.ServeHTTP(w, r)
			return
		}
		fw := &flushSignal{ResponseWriter: w, flushed: make(chan struct{})}
		r.Body = &lateEOFBody{ReadCloser: r.Body, left: r.ContentLength, flushed: fw.flushed}
		h.ServeHTTP(fw, r)
	})
}

// lateEOFBody is a request body whose read past its last byte waits for
// flushed (at most 5 s).
type lateEOFBody struct {
	io.ReadCloser
	left    int64
	flushed <-chan struct{}
}

func (b *lateEOFBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		select {
		case <-b.flushed:
		case <-time.After(5 * time.Second):
		}
		return b.ReadCloser.Read(p)
	}
	n, err := b.ReadCloser.Read(p[:min(int64(len(p)), b.left)])
	b.left -= int64(n)
	if err == io.EOF && b.left == 0 {
		err = nil // the next read, after the flush, says EOF
	}
	return n, err
}

// flushSignal closes flushed after its first Flush has sent the headers.
type flushSignal struct {
	http.ResponseWriter
	once    sync.Once
	flushed chan struct{}
}

func (f *flushSignal) Flush() {
	_ = http.NewResponseController(f.ResponseWriter).Flush()
	f.once.Do(func() { close(f.flushed) })
}

// Unwrap lets http.ResponseController reach the server's writer.
func (f *flushSignal) Unwrap() http.ResponseWriter { return f.ResponseWriter }
