package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestVersion: vLLM's /version, and "unknown" for a server that does not
// answer it.
func TestVersion(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"version": "0.11.0"}`: "0.11.0",  // vLLM
		`{}`:                    "unknown", // no version given
		`not json`:              "unknown", // not vLLM's answer
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
		if got := Version(context.Background(), &externalServer{endpoint: endpoint{base: srv.URL}}); got != want {
			t.Errorf("/version %s: Version = %q, want %q", body, got, want)
		}
		srv.Close()
	}
}
