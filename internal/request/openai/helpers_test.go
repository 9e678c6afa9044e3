package openai

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fixtureEvents reads a testdata SSE file and splits it into events, each
// with its trailing blank line.
func fixtureEvents(t testing.TB, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("read fixture: %v", err)
	}
	var out []string
	for _, ev := range strings.SplitAfter(string(b), "\n\n") {
		if strings.TrimSpace(ev) != "" {
			out = append(out, ev)
		}
	}
	return out
}

// writeSSE starts an SSE response.
func writeSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
}

// sendEvents writes events one by one, flushing each, gap apart.
func sendEvents(w http.ResponseWriter, r *http.Request, events []string, gap time.Duration) {
	fl := w.(http.Flusher)
	for i, ev := range events {
		if i > 0 && gap > 0 {
			select {
			case <-time.After(gap):
			case <-r.Context().Done():
				return
			}
		}
		if _, err := fmt.Fprint(w, ev); err != nil {
			return
		}
		fl.Flush()
	}
}

// fixtureHandler streams a fixture with no delay.
func fixtureHandler(t testing.TB, name string) http.HandlerFunc {
	events := fixtureEvents(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		writeSSE(w)
		sendEvents(w, r, events, 0)
	}
}

// recorded is one request a test server saw.
type recorded struct {
	path   string
	auth   string
	accept string
	body   []byte
}

// recorder keeps what the server was sent.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, recorded{path: r.URL.Path, auth: r.Header.Get("Authorization"), accept: r.Header.Get("Accept"), body: body})
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (rec *recorder) last(t *testing.T) recorded {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) == 0 {
		t.Fatal("server saw no request")
	}
	return rec.reqs[len(rec.reqs)-1]
}

// newServer starts a loopback server that is closed when the test ends,
// and a client for it whose idle connections are closed too.
func newServer(t testing.TB, h http.Handler, opts ...Option) (*httptest.Server, *Client) {
	t.Helper()
	srv := httptest.NewServer(h)
	c := New(srv.URL, opts...)
	t.Cleanup(func() {
		c.CloseIdleConnections()
		srv.Close()
	})
	return srv, c
}

// testCtx bounds a test's requests so a bug cannot hang the run.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}
