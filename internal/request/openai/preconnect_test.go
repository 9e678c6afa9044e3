package openai

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestPreconnectOpensDistinctConnections: n warm connections, and a
// following burst of n requests dials no new one.
func TestPreconnectOpensDistinctConnections(t *testing.T) {
	var dials atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"object":"list","data":[]}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := New(srv.URL, WithAPIKey("k"), WithMaxConnections(16))
	defer c.CloseIdleConnections()
	if err := c.Preconnect(context.Background(), 16); err != nil {
		t.Fatal(err)
	}
	if got := dials.Load(); got != 16 {
		t.Fatalf("preconnect opened %d connections, want 16", got)
	}
	if err := c.Preconnect(context.Background(), 16); err != nil {
		t.Fatal(err)
	}
	if got := dials.Load(); got != 16 {
		t.Errorf("a second round dialed again: %d connections in all, want 16 (reused)", got)
	}
}

// TestPreconnectReportsFailures: a refusing server and a bad status are
// errors that say what happened, and never show the key.
func TestPreconnectReportsFailures(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func() string
		want string
	}{
		// status other than 200
		{"unauthorized", func() string {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "no", http.StatusUnauthorized)
			}))
			t.Cleanup(s.Close)
			return s.URL
		}, "401"},
		// nothing listens
		{"refused", func() string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			_ = ln.Close()
			return "http://" + addr
		}, "preconnect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(tc.url(), WithAPIKey("sekrit-key"))
			defer c.CloseIdleConnections()
			err := c.Preconnect(context.Background(), 3)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "sekrit-key") {
				t.Errorf("error shows the API key: %v", err)
			}
		})
	}
}
