package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// TestExternalDetectsFamily: a deployment whose family was not given is
// measured as the family its /metrics names; a given family wins, and a
// deployment without /metrics stays the default's.
func TestExternalDetectsFamily(t *testing.T) {
	t.Parallel()
	serve := func(metrics string) string {
		mux := http.NewServeMux()
		mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
		mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"data":[{"id":"m"}]}`))
		})
		if metrics != "" {
			mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(metrics)) })
		}
		s := httptest.NewServer(mux)
		t.Cleanup(s.Close)
		return s.URL
	}
	sglang := "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name=\"m\"} 0\n"
	vllm := "vllm:num_requests_running{engine=\"0\"} 0\n"
	tests := []struct {
		name   string
		target string
		opts   []Option
		want   *serverfamily.Family
	}{
		{"sglang names", serve(sglang), nil, serverfamily.SGLang},
		{"vllm names", serve(vllm), nil, serverfamily.VLLM},
		{"no metrics", serve(""), nil, serverfamily.VLLM},
		{"given wins", serve(sglang), []Option{WithFamily(serverfamily.VLLM)}, serverfamily.VLLM},
	}
	p := profile.Deployment("d")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := Run(context.Background(), p, append([]Option{WithBackend(KindExternal), WithTarget(tt.target)}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close(context.Background())
			if got := FamilyOf(srv); got != tt.want {
				t.Errorf("FamilyOf = %s, want %s", got.Name, tt.want.Name)
			}
		})
	}
}
