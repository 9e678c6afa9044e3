package scrape

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// serveFile answers every request with a fixture, as vLLM's
// prometheus_client does.
func serveFile(t *testing.T, name string) http.HandlerFunc {
	t.Helper()
	body, err := os.ReadFile(fixture(name))
	if err != nil {
		t.Fatal(err)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write(body)
	}
}

func TestScrapeRecordedExposition(t *testing.T) {
	t.Parallel()
	var accept string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		accept = r.Header.Get("Accept")
		serveFile(t, "vllm-sim-v1-during.prom")(w, r)
	}))
	defer srv.Close()
	before := time.Now()
	s, err := NewScraper(srv.URL + "/metrics").Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Source, srv.URL+"/metrics"; got != want {
		t.Errorf("Source = %q, want %q", got, want)
	}
	if s.ScrapedAt.Before(before) {
		t.Errorf("ScrapedAt = %v, before the scrape started (%v)", s.ScrapedAt, before)
	}
	if v, err := s.Gauge(NumRequestsRunning); err != nil || v != 16 {
		t.Errorf("num_requests_running = %v, %v; want 16", v, err)
	}
	if !strings.HasPrefix(accept, "text/plain;version=0.0.4") {
		t.Errorf("Accept = %q, want the text format first", accept)
	}
}

func TestScrapeSendsBearerKey(t *testing.T) {
	t.Parallel()
	const key = "sk-test-secret"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		serveFile(t, "vllm-sim-v1-after.prom")(w, r)
	}))
	defer srv.Close()
	if _, err := NewScraper(srv.URL, WithAPIKey(key)).Scrape(context.Background()); err != nil {
		t.Errorf("with the key: %v", err)
	}
	_, err := NewScraper(srv.URL).Scrape(context.Background())
	var fe *FetchError
	if !errors.As(err, &fe) || fe.Status != http.StatusUnauthorized || !strings.Contains(err.Error(), "--api-key-env") {
		t.Errorf("without the key: %v, want HTTP 401 with a hint about the key", err)
	}
}

// TestScrapeFailures: every way a scrape can fail gives an error naming the
// URL and what went wrong — never a snapshot.
func TestScrapeFailures(t *testing.T) {
	t.Parallel()
	refused := httptest.NewServer(http.NotFoundHandler())
	refusedURL := refused.URL + "/metrics"
	refused.Close()

	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc // nil: use url as is
		url     string
		opts    []Option
		want    []string // parts of the message
		check   func(error) bool
	}{
		// wrong path
		{name: "404", handler: func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			want: []string{"HTTP 404 Not Found", "/metrics on the API port"}},
		// server error with a body
		{name: "500", handler: func(w http.ResponseWriter, r *http.Request) { http.Error(w, "engine dead", 500) },
			want: []string{"HTTP 500", "engine dead"}},
		// no answer within the timeout
		{name: "timeout", handler: func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
			opts: []Option{WithTimeout(50 * time.Millisecond)}, want: []string{"within 50ms (timeout)"},
			check: func(err error) bool { return errors.Is(err, context.DeadlineExceeded) }},
		// broken text: the line and its text
		{name: "malformed", handler: serveFile(t, "vllm-sim-malformed.prom"),
			want:  []string{"line 3", `engine=\"0\" 1`},
			check: func(err error) bool { var pe *ParseError; return errors.As(err, &pe) && pe.Line == 3 }},
		// protobuf instead of text
		{name: "protobuf", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", `application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited`)
			_, _ = w.Write([]byte{0x0a, 0x01})
		}, want: []string{"vnd.google.protobuf", "text/plain; version=0.0.4"}},
		// the body breaks off: a transport error, not a parse error
		{name: "cut body", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100000")
			_, _ = w.Write([]byte("vllm:num_requests_running 1\nvllm:num_req"))
		}, want: []string{"unexpected EOF"},
			check: func(err error) bool { var fe *FetchError; return errors.As(err, &fe) }},
		// an empty page
		{name: "empty", handler: func(w http.ResponseWriter, r *http.Request) {}, want: []string{"empty exposition"}},
		// nothing listening
		{name: "refused", url: refusedURL, want: []string{"connection refused"}},
		// no scheme
		{name: "no scheme", url: "127.0.0.1:8000/metrics", want: []string{"want an http:// or https:// URL"}},
		// no host
		{name: "no host", url: "http:///metrics", want: []string{"no host"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := tc.url
			if tc.handler != nil {
				srv := httptest.NewServer(tc.handler)
				defer srv.Close()
				url = srv.URL + "/metrics"
			}
			snap, err := NewScraper(url, tc.opts...).Scrape(context.Background())
			if err == nil || snap != nil {
				t.Fatalf("Scrape = %v, %v; want an error", snap, err)
			}
			for _, want := range append(tc.want, url) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if tc.check != nil && !tc.check(err) {
				t.Errorf("error %#v is not of the expected type", err)
			}
		})
	}
}

func TestScrapeStopsWithCallerContext(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewScraper(srv.URL).Scrape(ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("error = %v, want context.Canceled naming the URL", err)
	}
}
