package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// TestGatewayExternal: the external backend reaches a deployment through
// its gateway (a header every path wants), keeps the gateway for what
// reaches the server next (GatewayOf: Probe, Version), and names the
// refusal (401) when the header is missing, with what to give. The
// header's value is in no message.
func TestGatewayExternal(t *testing.T) {
	testphase.Fault(t)
	const key = "gw-value-31415"
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"version":"0.11.0"}`)) })
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(`{"data":[{"id":"m"}]}`)) })
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != key {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	g, err := gateway.Config{Headers: []gateway.Header{{Name: "X-Api-Key", Value: key}}}.Load(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var log strings.Builder
	srv, err := Run(ctx, profile.Deployment(""), WithBackend(KindExternal), WithTarget(ts.URL), WithGateway(g), WithLog(&log))
	if err != nil {
		t.Fatalf("through the gateway: %v", err)
	}
	defer srv.Close(ctx)
	if GatewayOf(srv) != g {
		t.Error("GatewayOf does not return the server's gateway")
	}
	if err := Probe(ctx, srv); err != nil {
		t.Errorf("Probe through the gateway: %v", err)
	}
	if v := Version(ctx, srv); v != "0.11.0" {
		t.Errorf("Version through the gateway = %q, want 0.11.0", v)
	}
	if strings.Contains(log.String(), key) {
		t.Errorf("the log shows the header's value:\n%s", log.String())
	}
	srv.Close(ctx)

	_, err = Run(ctx, profile.Deployment(""), WithBackend(KindExternal), WithTarget(ts.URL))
	if err == nil || !errors.Is(err, ErrKeyRejected) || !strings.Contains(err.Error(), "401 Unauthorized") || !strings.Contains(err.Error(), "--header 'Name: value'") {
		t.Errorf("without the header: error = %v, want the 401 named with --header's advice", err)
	}
}

// TestGatewayFromEnv: the suite's variables make the external backend's
// gateway; a bad one is a settings error naming the variable.
func TestGatewayFromEnv(t *testing.T) {
	testphase.Fault(t)
	opts, err := fromLookup(func(k string) (string, bool) {
		v, ok := map[string]string{"VLLMPERF_HEADERS": "X-Route: a", envTarget: "http://127.0.0.1:1"}[k]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	s := defaultSettings()
	for _, o := range opts {
		o(&s)
	}
	if got := s.gateway.String(); got != "headers X-Route (values hidden)" {
		t.Errorf("gateway = %q", got)
	}
	if strings.Contains(s.String(), "X-Route: a") || !strings.Contains(s.String(), "gateway=headers X-Route (values hidden)") {
		t.Errorf("settings = %s", s)
	}
	_, err = fromLookup(func(k string) (string, bool) {
		return map[string]string{"VLLMPERF_HEADERS": "broken"}[k], k == "VLLMPERF_HEADERS"
	})
	if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), `VLLMPERF_HEADERS "[REDACTED]"`) {
		t.Errorf("bad VLLMPERF_HEADERS: error = %v", err)
	}
}
