package calreplay

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestHostPaceBehind: the host is behind when the engine's lost time or
// the process's CPU wait passes 5% of the run, whichever is larger.
func TestHostPaceBehind(t *testing.T) {
	tests := []struct {
		name   string
		h      HostPace
		share  float64
		behind bool
	}{
		{"kept up", HostPace{Lost: 10 * time.Millisecond, Waited: 20 * time.Millisecond, Wall: time.Second, WaitKnown: true}, 0.02, false},
		{"at the threshold", HostPace{Lost: 50 * time.Millisecond, Wall: time.Second}, 0.05, false},
		{"engine lost time", HostPace{Lost: 60 * time.Millisecond, Wall: time.Second}, 0.06, true},
		{"threads waited", HostPace{Lost: time.Millisecond, Waited: 300 * time.Millisecond, Wall: time.Second, WaitKnown: true}, 0.3, true},
		{"no run", HostPace{}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.h.Share(); got != tt.share {
				t.Errorf("Share() = %v, want %v", got, tt.share)
			}
			if got := tt.h.Behind(); got != tt.behind {
				t.Errorf("Behind() = %v, want %v", got, tt.behind)
			}
			if s := tt.h.String(); !strings.Contains(s, "vllmperf_sim_real_time_lost_seconds_total") {
				t.Errorf("String() = %q, does not name the metric", s)
			}
		})
	}
	if s := (HostPace{Wall: time.Second}).String(); !strings.Contains(s, "unknown here") {
		t.Errorf("without schedstat: %q, want the CPU wait said unknown", s)
	}
}

// TestScrapeLost reads the lost-time counter from an exposition, and says
// by name when it is missing or the server fails.
func TestScrapeLost(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		want    time.Duration
		wantErr string
	}{
		{"labelled", 200, "# TYPE vllmperf_sim_real_time_lost_seconds_total counter\nvllmperf_sim_real_time_lost_seconds_total{engine=\"0\",model_name=\"m\"} 1.25\n", 1250 * time.Millisecond, ""},
		{"bare", 200, "vllmperf_sim_real_time_lost_seconds_total 0\n", 0, ""},
		{"a longer name first", 200, "vllmperf_sim_real_time_lost_seconds_total_x 3\nvllmperf_sim_real_time_lost_seconds_total 2\n", 2 * time.Second, ""},
		{"missing", 200, "vllm:num_requests_running 0\n", 0, "has no vllmperf_sim_real_time_lost_seconds_total"},
		{"not a number", 200, "vllmperf_sim_real_time_lost_seconds_total x\n", 0, "invalid syntax"},
		{"server error", 500, "", 0, "500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/metrics" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer ts.Close()
			got, err := scrapeLost(context.Background(), ts.Client(), ts.URL)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			case got != tt.want:
				t.Errorf("lost %v, want %v", got, tt.want)
			}
		})
	}
}
