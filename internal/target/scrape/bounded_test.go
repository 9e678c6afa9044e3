package scrape

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBoundedClient: an answer within the bound is read whole; one past
// it fails with the bound named, after reading at most the bound and a
// read buffer.
func TestBoundedClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		block := strings.Repeat("x", 1<<10)
		for range 64 {
			if _, err := io.WriteString(w, block); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		limit int64
		want  string
	}{{64 << 10, ""}, {10 << 10, "answer larger than"}} {
		resp, err := boundedClient(srv.Client(), tc.limit).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case tc.want == "" && (err != nil || len(b) != 64<<10):
			t.Errorf("limit %d: read %d bytes, %v; want the whole answer", tc.limit, len(b), err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || int64(len(b)) > tc.limit):
			t.Errorf("limit %d: read %d bytes, %v; want at most the limit and %q", tc.limit, len(b), err, tc.want)
		}
	}
}

// TestScrapeErrorHidesTheKey: a /metrics refusal that echoes the
// Authorization header shows no part of the key in the error, even where
// the key straddles the end of the body's start that is kept.
func TestScrapeErrorHidesTheKey(t *testing.T) {
	const key = "sk-scrape-s3cret"
	prefix := " you sent Bearer "
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		// The key starts 4 bytes before maxErrorBody.
		_, _ = io.WriteString(w, strings.Repeat(".", maxErrorBody-4-len(prefix))+prefix+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer srv.Close()
	sc := NewScraper(srv.URL+"/metrics", WithAPIKey(key), WithHTTPClient(srv.Client()))
	_, err := sc.Scrape(t.Context())
	if err == nil || strings.Contains(err.Error(), key[:4]) || !strings.Contains(err.Error(), "you sent Bearer [RED") {
		t.Errorf("error %v: want a refusal with the key redacted", err)
	}
}
