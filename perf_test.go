// Perf scenarios: wiring only. Each profile is started through the backend
// chosen by VLLMPERF_BACKEND (sim by default; container for a vLLM image on
// GPUs, or VLLMPERF_IMAGE=sim for the simulator image; external for
// VLLMPERF_TARGET), loaded by the harness, and reported as custom benchmark
// metrics that benchstat compares:
//
//	go test -run '^$' -bench Perf -benchtime 1x -count 6 . | tee new.txt
//	VLLMPERF_BACKEND=container go test -run '^$' -bench 'Perf/high-throughput' -benchtime 1x .
//
// VLLMPERF_CONCURRENCY, VLLMPERF_REQUESTS, VLLMPERF_PROMPT_TOKENS and
// VLLMPERF_MAX_TOKENS size the scenario (defaults keep a simulator run short).
package perf_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/harness/load"
	"github.com/vllmperf/vllmperf/internal/harness/openai"
	"github.com/vllmperf/vllmperf/internal/harness/profile"
	"github.com/vllmperf/vllmperf/internal/harness/sample"
	"github.com/vllmperf/vllmperf/internal/harness/server"
	"github.com/vllmperf/vllmperf/internal/harness/stats"
	"github.com/vllmperf/vllmperf/internal/harness/workload"
)

// scenario is the load shape of one perf run.
type scenario struct {
	concurrency, requests, promptTokens, maxTokens int
}

func envInt(t testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}

func scenarioFromEnv(t testing.TB) scenario {
	return scenario{
		concurrency:  envInt(t, "VLLMPERF_CONCURRENCY", 8),
		requests:     envInt(t, "VLLMPERF_REQUESTS", 48),
		promptTokens: envInt(t, "VLLMPERF_PROMPT_TOKENS", 128),
		maxTokens:    envInt(t, "VLLMPERF_MAX_TOKENS", 64),
	}
}

// startProfile starts the named profile on the configured backend; the
// server is closed when the test ends.
func startProfile(t testing.TB, name string) server.Server {
	t.Helper()
	p, err := profile.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	opts, err := server.FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Run(context.Background(), p, opts...)
	if errors.Is(err, server.ErrNoDocker) && os.Getenv("CI") != "true" {
		t.Skipf("the container backend needs a Docker engine: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("stop %s: %v", name, err)
		}
	})
	return srv
}

// runScenario loads srv once and returns every sample and the measured phase.
func runScenario(t testing.TB, srv server.Server, sc scenario, warmup int) *load.Result {
	t.Helper()
	gen, err := workload.New(workload.Config{Model: srv.Model(), PromptTokens: sc.promptTokens, MaxTokens: sc.maxTokens, IgnoreEOS: true})
	if err != nil {
		t.Fatal(err)
	}
	client := openai.New(srv.BaseURL(), openai.WithMaxConnections(sc.concurrency))
	defer client.CloseIdleConnections()
	if err := client.Preconnect(context.Background(), sc.concurrency); err != nil {
		t.Fatal(err)
	}
	res, err := load.Run(context.Background(), load.Config{Concurrency: sc.concurrency, Requests: sc.requests, Warmup: warmup}, client, gen.Next)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// BenchmarkPerf runs each built-in profile and reports vLLM's serving
// metrics as custom benchmark units (latencies in ns, so benchstat shows
// seconds; better=lower for latencies, higher for throughput).
func BenchmarkPerf(b *testing.B) {
	sc := scenarioFromEnv(b)
	for _, name := range profile.Names() {
		b.Run(name, func(b *testing.B) {
			srv := startProfile(b, name)
			var all []sample.Sample
			var measured time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res := runScenario(b, srv, sc, 1)
				all = append(all, res.Measured()...)
				measured += res.End.Sub(res.Start)
			}
			b.StopTimer()
			start := time.Unix(0, 0)
			sum, err := stats.Summarize(all, start, start.Add(measured), stats.SLO{})
			if err != nil {
				b.Fatal(err)
			}
			if reason, bad := sum.Inconclusive(); bad {
				b.Fatalf("%s: INCONCLUSIVE: %s", name, reason)
			}
			if sum.Failed > 0 {
				b.Errorf("%s: %d of %d requests failed: %v", name, sum.Failed, sum.Requests, sum.FailedByKind)
			}
			reportDist(b, "ttft", sum.TTFT)
			reportDist(b, "tpot", sum.TPOT)
			reportDist(b, "itl", sum.ITL)
			reportDist(b, "e2el", sum.E2EL)
			b.ReportMetric(sum.OutputThroughput, "output-tok/s")
			b.ReportMetric(sum.RequestThroughput, "req/s")
			b.ReportMetric(srv.ReadyIn().Seconds(), "time-to-ready-s")
		})
	}
}

// reportDist reports a latency distribution (milliseconds in stats) as
// p50/p90/p99 in nanoseconds.
func reportDist(b *testing.B, name string, d stats.Dist) {
	for _, p := range []float64{50, 90, 99} {
		if v, ok := d.Pct(p); ok {
			b.ReportMetric(v*float64(time.Millisecond), fmt.Sprintf("%s-p%g-ns", name, p))
		}
	}
}

// TestPerfProfilesServe is the quick check a developer runs with
// `go test -run Perf`: every profile starts, serves a short closed-loop
// scenario without a failure, and every request's token counts are exact.
func TestPerfProfilesServe(t *testing.T) {
	sc := scenario{concurrency: 4, requests: 8, promptTokens: 64, maxTokens: 16}
	for _, name := range profile.Names() {
		t.Run(name, func(t *testing.T) {
			srv := startProfile(t, name)
			res := runScenario(t, srv, sc, 0)
			for _, s := range res.Measured() {
				if s.Err != nil {
					t.Errorf("request %d: %v", s.Index, s.Err)
					continue
				}
				if s.CompletionTokens != sc.maxTokens {
					t.Errorf("request %d: %d completion tokens, want %d (ignore_eos)", s.Index, s.CompletionTokens, sc.maxTokens)
				}
			}
		})
	}
}
