package check_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// The reliability plan's metric faults (docs/reliability.md): the suite's
// Prometheus checks against a real chat API (the simulator, in process)
// whose /metrics is missing, slow or malformed fail with the URL or the
// line; none passes. A counter reset mid-run (INVALID) is proved by the
// root package's TestPerfChecksFail ("counter reset").

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// metricsAt is a server whose /metrics is somewhere else.
type metricsAt struct {
	server.Server
	url string
}

func (m metricsAt) MetricsURL() string { return m.url }

// startSim starts the in-process simulator with simArgs for the test.
func startSim(t *testing.T, simArgs ...string) server.Server {
	t.Helper()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Run(context.Background(), p.WithSimArgs(simArgs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return srv
}

// smallPoint is six short requests, two in flight, sampled every 50 ms.
func smallPoint() scenario.Point {
	return scenario.Point{
		Key:             "faults",
		Classes:         []workload.Class{{Name: "c", Weight: 1, Config: workload.Config{PromptTokens: 32, MaxTokens: 8, IgnoreEOS: true}}},
		Load:            load.Config{Concurrency: 2, Requests: 6},
		SamplerInterval: 50 * time.Millisecond,
	}
}

// metricChecks are the checks that read /metrics, always run.
var metricChecks = []string{"reconcile/generation_tokens", "reconcile/prompt_tokens", "reconcile/request_success", "reconcile/ttft_count", "ttft_gap", "kv_peak", "preemptions", "drain"}

// TestMetricsFaultsNeverPass: a /metrics that answers 404, too slowly, or
// with a malformed line fails every check that reads it, naming the URL
// (and the line); the request check, which needs no metrics, still passes.
func TestMetricsFaultsNeverPass(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	for _, tc := range []struct {
		name   string
		server func(t *testing.T) server.Server
		opts   []pipeline.Option
		want   []string // in every metric check's detail
	}{
		// /metrics is not there (a proxy that does not pass it on).
		{"404", func(t *testing.T) server.Server { return metricsAt{startSim(t), notFound.URL + "/metrics"} }, nil,
			[]string{"could not read the server's metrics", "scrape " + notFound.URL + "/metrics: HTTP 404 Not Found"}},
		// /metrics answers 2 s late, past a 300 ms scrape timeout.
		{"slow", func(t *testing.T) server.Server { return startSim(t, "--sim-fault-metrics-delay", "2s") },
			[]pipeline.Option{pipeline.WithScrapeTimeout(300 * time.Millisecond)},
			[]string{"could not read the server's metrics", "/metrics: no complete answer within 300ms (timeout)"}},
		// /metrics is not valid exposition text: the line is named.
		{"malformed", func(t *testing.T) server.Server { return startSim(t, "--sim-fault-metrics-malformed") }, nil,
			[]string{"could not read the server's metrics", "/metrics: line 3: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := tc.server(t)
			res, err := pipeline.Run(context.Background(), srv, smallPoint(), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			results := check.All(res, thresholds.Default().Scope("basic", "faults"), check.Facts{})
			byName := map[string]check.Result{}
			for _, r := range results {
				byName[r.Name] = r
			}
			if got := byName["requests"]; got.Status != check.Pass {
				t.Errorf("requests = %s, want PASS: the requests themselves succeeded", got)
			}
			for _, name := range metricChecks {
				got, ok := byName[name]
				if !ok {
					t.Errorf("no %s check", name)
					continue
				}
				if got.Status != check.Fail || !got.Failed(false) {
					t.Errorf("%s = %s, want FAIL (failing even when not strict)", name, got)
				}
				for _, w := range tc.want {
					if !strings.Contains(got.Detail, w) {
						t.Errorf("%s detail lacks %q:\n%s", name, w, got.Detail)
					}
				}
			}
		})
	}
}

// TestZeroSuccessesNeverPass: a server that fails every request gives no
// passing run: the request check is INCONCLUSIVE and fails the run, and
// the reconciliations cannot match the client (INCONCLUSIVE too).
func TestZeroSuccessesNeverPass(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	srv := startSim(t, "--sim-fault-500-rate", "1")
	res, err := pipeline.Run(context.Background(), srv, smallPoint())
	if err != nil {
		t.Fatal(err)
	}
	results := check.All(res, thresholds.Default().Scope("basic", "faults"), check.Facts{})
	for _, r := range results {
		if strings.HasPrefix(r.Name, "reconcile/") && r.Status == check.Pass {
			t.Errorf("%s passed with no successful request: %s", r.Name, r)
		}
		if r.Name == "requests" && (r.Status != check.Inconclusive || !strings.Contains(r.Detail, "no measured request succeeded")) {
			t.Errorf("requests = %s, want INCONCLUSIVE: no measured request succeeded", r)
		}
	}
	if len(check.Failures(results, false)) == 0 {
		t.Errorf("no check fails a run without one successful request:\n%v", results)
	}
}
