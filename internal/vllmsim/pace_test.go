package vllmsim

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/simtest"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// TestBehindRealTimeIsLogged: steps far shorter than the host can run
// (--sim-slowdown 0.0001: a fraction of a microsecond each) leave the
// engine behind real time; it counts the time lost on /metrics and the
// log says so by name, rather than the engine silently serving less.
func TestBehindRealTimeIsLogged(t *testing.T) {
	t.Parallel()
	log := &simtest.Buffer{}
	s, err := New([]string{"--model", "Qwen/Qwen3-0.6B", "--sim-gpu", "h100", "--sim-slowdown", "0.0001", "--sim-cold-start", "0", "--disable-log-stats"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { s.watchPace(stop, 20*time.Millisecond) })
	wg.Go(func() { // keep the engine busy until the line is logged (bounded)
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := ts.Client().Post(ts.URL+"/v1/completions", "application/json",
				strings.NewReader(`{"prompt":"a b c","max_tokens":2000,"ignore_eos":true}`))
			if err != nil {
				t.Error(err)
				return
			}
			_ = resp.Body.Close()
		}
	})
	ok := waitFor(5*time.Second, func() bool { return strings.Contains(log.String(), "Behind real time") })
	close(stop)
	wg.Wait()
	if !ok {
		t.Fatalf("no 'Behind real time' warning in the log:\n%s", log.String())
	}
	if !strings.Contains(log.String(), engine.MetricLostSeconds) {
		t.Errorf("the warning does not name %s:\n%s", engine.MetricLostSeconds, log.String())
	}
	resp, err := ts.Client().Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s, %v", resp.Status, err)
	}
	for _, name := range []string{engine.MetricLostSeconds, engine.MetricModelledSeconds, engine.MetricBehindRatio} {
		if !strings.Contains(string(body), "\n"+name+"{") {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if lost := readLost(s.current()); lost <= 0 {
		t.Errorf("%s = %v after the engine fell behind, want > 0", engine.MetricLostSeconds, lost)
	}
}
