package vllmsim

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/simtest"
	"github.com/vllmperf/vllmperf/internal/vllmsim/tokenizer"
)

// TestStatsLog drives the stats logger through Handler (no Serve) and checks
// the vLLM-style throughput line it writes after traffic.
func TestStatsLog(t *testing.T) {
	t.Parallel()
	log := &simtest.Buffer{}
	s, err := New(append(append([]string{}, fastArgs...), "--api-key", "zz-key"), log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/v1/completions", strings.NewReader(`{"prompt":"a b c","max_tokens":4,"ignore_eos":true}`))
	req.Header.Set("Authorization", "Bearer zz-key")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.logStats(stop, 20*time.Millisecond)
	}()
	ok := waitFor(5*time.Second, func() bool { return strings.Contains(log.String(), "Avg generation throughput") })
	close(stop)
	<-done
	if !ok {
		t.Fatalf("no stats line in the log:\n%s", log.String())
	}
	if strings.Contains(log.String(), "zz-key") {
		t.Error("the API key appears in the log")
	}
	if !strings.Contains(log.String(), "api_key='<redacted>'") {
		t.Errorf("start-up args line does not show the key as redacted:\n%s", log.String())
	}
}

// TestShutdownAbortsInFlight: a stream still running when Serve's context
// ends is aborted after the grace period and Serve returns.
func TestShutdownAbortsInFlight(t *testing.T) {
	t.Parallel()
	s, err := New(append(append([]string{}, fastArgs...), "--sim-fixed-itl", "10ms"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s.grace = 100 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	m := &sim{s: s, url: "http://" + ln.Addr().String()}
	long := make(chan streamResult, 1)
	go func() {
		long <- m.stream(t, context.Background(), "/v1/completions", `{"prompt":"a","max_tokens":5000,"ignore_eos":true,"stream":true}`)
	}()
	if !waitFor(5*time.Second, func() bool { return sum(m.scrape(t), "vllm:num_requests_running") >= 1 }) {
		t.Fatal("the stream never started")
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	if el := time.Since(start); el < s.grace {
		t.Errorf("Serve returned after %v, before the %v grace period", el, s.grace)
	}
	res := <-long
	got := 0
	for _, e := range res.events {
		var c wireChunk
		if json.Unmarshal([]byte(e.data), &c) == nil {
			got += tokenizer.CountTokens(c.text())
		}
	}
	if got == 0 || got >= 5000 {
		t.Errorf("the stream carried %d of 5000 tokens: want it started, then cut short by the shutdown", got)
	}
	http.DefaultClient.CloseIdleConnections()
}
