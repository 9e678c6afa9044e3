package server

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/profile"
)

// TestExternalMetrics checks where an external deployment's metrics are
// read (MetricsOf) and the settings that say so.
func TestExternalMetrics(t *testing.T) {
	lora := `{"data":[{"id":"llama","parent":null},{"id":"sql-lora","root":"/adapters/sql","parent":"llama"}]}`
	srv := fakeVLLM(t, 200, lora)
	p := profile.Deployment("")
	tests := []struct {
		name    string
		opts    []Option
		want    Metrics // when no error
		wantErr string
	}{
		// One server: its target's /metrics, series of the model measured.
		{"one server", []Option{WithModel("llama")}, Metrics{URLs: []string{srv.URL + "/metrics"}, Model: "llama"}, ""},
		// A LoRA adapter's series carry its base model's name.
		{"adapter", []Option{WithModel("sql-lora")}, Metrics{URLs: []string{srv.URL + "/metrics"}, Model: "llama"}, ""},
		// Replicas: each URL (a bare host gets /metrics).
		{"replicas", []Option{WithModel("llama"), WithMetricsURLs("http://127.0.0.1:9001", "http://127.0.0.1:9002/metrics")},
			Metrics{URLs: []string{"http://127.0.0.1:9001/metrics", "http://127.0.0.1:9002/metrics"}, Model: "llama"}, ""},
		// Prometheus with a selector.
		{"prometheus", []Option{WithModel("llama"), WithPrometheus("http://127.0.0.1:9090/", `{job="vllm"}`)},
			Metrics{Prometheus: "http://127.0.0.1:9090", Selector: `{job="vllm"}`, Model: "llama"}, ""},
		// A replica given twice would count double.
		{"twice", []Option{WithMetricsURLs("http://127.0.0.1:9001", "http://127.0.0.1:9001/metrics")}, Metrics{}, "given twice"},
		{"not a url", []Option{WithMetricsURLs("vllm-0.vllm:8000")}, Metrics{}, "want an http:// or https:// URL"},
		{"both", []Option{WithMetricsURLs("http://127.0.0.1:9001"), WithPrometheus("http://127.0.0.1:9090", `{job="vllm"}`)}, Metrics{}, "give one"},
		{"selector alone", []Option{WithPrometheus("", `{job="vllm"}`)}, Metrics{}, "give a Prometheus URL"},
		{"no selector", []Option{WithPrometheus("http://127.0.0.1:9090", "")}, Metrics{}, "want label matchers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			s, err := Run(ctx, p, append([]Option{WithBackend(KindExternal), WithTarget(srv.URL)}, tt.opts...)...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrSettings) {
					t.Fatalf("err = %v, want a settings error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close(ctx)
			got := MetricsOf(s)
			if strings.Join(got.URLs, " ") != strings.Join(tt.want.URLs, " ") || got.Prometheus != tt.want.Prometheus || got.Selector != tt.want.Selector || got.Model != tt.want.Model {
				t.Errorf("MetricsOf = %+v, want %+v", got, tt.want)
			}
		})
	}
	// A backend that starts its own server reads its own /metrics.
	_, err := Run(context.Background(), p, WithBackend(KindSim), WithMetricsURLs("http://127.0.0.1:9001"))
	if err == nil || !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), "already running") {
		t.Errorf("sim with replicas: err = %v, want a settings error", err)
	}
}

// TestFleetFromEnvAndOptions: VLLMPERF_METRICS_URLS is a comma-separated
// list; a later WithMetricsURLs (a command's flags) wins over it.
func TestFleetFromEnvAndOptions(t *testing.T) {
	env := map[string]string{envMetricsURLs: " http://127.0.0.1:9001 ,,http://127.0.0.1:9002/metrics", envPrometheusSelector: ""}
	opts, err := fromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	s := settings{backend: KindExternal, target: "http://127.0.0.1:8000"}
	for _, o := range opts {
		o(&s)
	}
	if err := s.checkMetrics(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.metrics.URLs, " "); got != "http://127.0.0.1:9001/metrics http://127.0.0.1:9002/metrics" {
		t.Errorf("from the environment: URLs %q", got)
	}
	later := append([]string{"http://127.0.0.1:9003"}, SplitList("http://127.0.0.1:9004,http://127.0.0.1:9005")...)
	for _, o := range append(opts, WithMetricsURLs(later...)) {
		o(&s)
	}
	if err := s.checkMetrics(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.metrics.URLs, " "); got != "http://127.0.0.1:9003/metrics http://127.0.0.1:9004/metrics http://127.0.0.1:9005/metrics" {
		t.Errorf("options after the environment: URLs %q", got)
	}
}
