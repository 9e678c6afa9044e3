package server

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// fakeVLLM answers /health with health and /v1/models with models.
func fakeVLLM(t *testing.T, health int, models string) *httptest.Server {
	return fakeServer(t, health, http.StatusOK, models, "")
}

// fakeServer is fakeVLLM with a status for /v1/models and, when key is
// set, /v1/models answering 401 without that bearer token.
func fakeServer(t *testing.T, health, modelsStatus int, models, key string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(health) })
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, `{"error":"Unauthorized"}`, http.StatusUnauthorized)
			return
		}
		w.WriteHeader(modelsStatus)
		_, _ = w.Write([]byte(models))
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// TestExternalBackend checks the existing-deployment backend against
// misbehaving fakes.
func TestExternalBackend(t *testing.T) {
	testphase.Fault(t)
	two := `{"object":"list","data":[{"id":"big"},{"id":"Qwen/Qwen3-0.6B"}]}`
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + closed.Addr().String()
	closed.Close()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		target    func() string
		model     string // WithModel
		key       string // WithAPIKey
		wantModel string
		wantErr   string
	}{
		// The profile's model is among those served: it is chosen.
		{"profile model", func() string { return fakeVLLM(t, 200, two).URL }, "", "", "Qwen/Qwen3-0.6B", ""},
		// A /v1 suffix and trailing slash are stripped.
		{"v1 suffix", func() string { return fakeVLLM(t, 200, two).URL + "/v1/" }, "", "", "Qwen/Qwen3-0.6B", ""},
		// An explicit override wins.
		{"override", func() string { return fakeVLLM(t, 200, two).URL }, "big", "", "big", ""},
		// The profile's model is not served: the first one is used.
		{"first model", func() string { return fakeVLLM(t, 200, `{"data":[{"id":"other"}]}`).URL }, "", "", "other", ""},
		// Several models and none named: a settings error listing them,
		// the LoRA adapter (parent set) marked as such.
		{"several models", func() string {
			return fakeVLLM(t, 200, `{"data":[{"id":"llama","root":"meta/llama","parent":null},{"id":"sql-lora","root":"/adapters/sql","parent":"llama"}]}`).URL
		}, "", "", "", `serves 2 models: "llama", "sql-lora" (LoRA adapter of "llama"); say which to measure with the WithModel option or VLLMPERF_MODEL`},
		// An override the server does not serve.
		{"override missing", func() string { return fakeVLLM(t, 200, two).URL }, "nope", "", "", "does not serve"},
		// The engine is dead.
		{"unhealthy", func() string { return fakeVLLM(t, 503, two).URL }, "", "", "", "not healthy"},
		// Nothing listens.
		{"unreachable", func() string { return deadURL }, "", "", "", "not healthy"},
		// No model served.
		{"empty list", func() string { return fakeVLLM(t, 200, `{"data":[]}`).URL }, "", "", "", "serves no model"},
		// Not JSON.
		{"bad json", func() string { return fakeVLLM(t, 200, `<html>`).URL }, "", "", "", "not an OpenAI model list"},
		// A server without vLLM's /health (404) is checked through /v1/models.
		{"no health endpoint", func() string { return fakeVLLM(t, 404, two).URL }, "", "", "Qwen/Qwen3-0.6B", ""},
		// A server without /v1/models works when the model is named.
		{"no model list, model named", func() string { return fakeServer(t, 200, 404, "", "").URL }, "m", "", "m", ""},
		// ... and says what to do when it is not.
		{"no model list, no model", func() string { return fakeServer(t, 200, 404, "", "").URL }, "", "", "", "list models"},
		// A server with --api-key: the key is sent and the list read.
		{"api key sent", func() string { return fakeServer(t, 200, 200, two, "k3y").URL }, "", "k3y", "Qwen/Qwen3-0.6B", ""},
		// ... and without the key the error says the server refused it
		// (ErrKeyRejected; the caller names where the key comes from).
		{"api key missing", func() string { return fakeServer(t, 200, 200, two, "k3y").URL }, "", "", "", "refused the API key"},
		// Not a URL.
		{"bad url", func() string { return "127.0.0.1:8000" }, "", "", "", "base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			s, err := Run(ctx, p, WithBackend(KindExternal), WithTarget(tt.target()), WithModel(tt.model), WithAPIKey(tt.key))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "start vllm: ") {
					t.Fatalf("err = %v, want start vllm: ...%q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Model() != tt.wantModel {
				t.Errorf("Model = %q, want %q", s.Model(), tt.wantModel)
			}
			if strings.HasSuffix(s.BaseURL(), "/") || strings.HasSuffix(s.BaseURL(), "/v1") {
				t.Errorf("BaseURL = %q, want the bare root", s.BaseURL())
			}
			if s.MetricsURL() != s.BaseURL()+"/metrics" || s.Logs(10) != nil || s.Close(ctx) != nil {
				t.Errorf("metrics %q logs %v", s.MetricsURL(), s.Logs(10))
			}
		})
	}
}
