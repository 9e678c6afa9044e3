package perf_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/simtest"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The tests in this file point the suite at deployments that are not one
// server alone: replicas behind a load balancer, and a server another
// client uses at the same time (docs/deployments.md). They declare
// make test's alone phase (testphase.Alone): they start servers of their
// own.

// reconciliations are the checks that match the server's counters to the
// client's.
var reconciliations = []string{"reconcile/generation_tokens", "reconcile/prompt_tokens", "reconcile/request_success", "reconcile/ttft_count"}

// roundRobin is a load balancer on loopback that sends each request to
// the next of backends, /metrics included, as a Kubernetes Service does.
func roundRobin(t *testing.T, backends ...string) string {
	t.Helper()
	var next atomic.Uint64
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		forward(w, r, backends[(next.Add(1)-1)%uint64(len(backends))])
	}))
	t.Cleanup(lb.Close)
	return lb.URL
}

// forward sends r to backend, streaming the answer back as it comes
// (simtest.StreamingProxy).
func forward(w http.ResponseWriter, r *http.Request, backend string) {
	u, err := url.Parse(backend)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	simtest.StreamingProxy(u).ServeHTTP(w, r)
}

// TestRealServerFleet: two simulators behind a round-robin proxy. With
// each replica's /metrics named (VLLMPERF_METRICS_URLS), the suite's
// TestPerf passes with every reconciliation exact; with the proxy's
// /metrics alone, no check claims a restart and the reconciliations are
// INVALID, naming several servers and what to pass.
func TestRealServerFleet(t *testing.T) {
	testphase.Alone(t)
	a := startVLLMSim(t, serverSetup{maxNumSeqs: 32, maxModelLen: 4096})
	b := startVLLMSim(t, serverSetup{maxNumSeqs: 32, maxModelLen: 4096})
	lb := roundRobin(t, a, b)

	t.Run("replicas", func(t *testing.T) {
		if testing.Short() {
			t.Skip("runs the suite's TestPerf in a go test process of its own (about half a minute): not with -short")
		}
		goBin, err := exec.LookPath("go")
		require.NoError(t, err, "the go command runs the suite's tests")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, goBin, "test", "-count=1", "-short", "-v", "-run", "^TestPerf$", ".")
		cmd.Env = append(os.Environ(), "VLLMPERF_BACKEND=external", "VLLMPERF_TARGET="+lb, "VLLMPERF_LABEL=fleet",
			"VLLMPERF_METRICS_URLS="+a+"/metrics,"+b+"/metrics", "VLLMPERF_STRICT=true", "VLLMPERF_PROFILES=",
			"VLLMPERF_SCENARIOS=ttft-tpot", "VLLMPERF_RESULTS=", "VLLMPERF_SIM_ARGS=")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err = cmd.Run()
		text := out.String()
		require.NoError(t, err, "go test -run TestPerf against two replicas:\n%s", text)
		assert.Contains(t, text, "--- PASS: TestPerf/profiles/fleet ")
		assert.NotContains(t, text, "several servers")
	})

	t.Run("one URL", func(t *testing.T) {
		s := externalSuite(t, lb, "fleet", serverfamily.VLLM, "")
		ss := start(t, s, "fleet")
		defer closeSession(t, ss)
		r, err := ss.Run(context.Background(), pointNamed(t, ss, "ttft-tpot", "prompt=short/conc=1"))
		require.NoError(t, err)
		for _, name := range reconciliations {
			c := checkNamed(t, r, name)
			assert.Equal(t, check.Invalid, c.Status, "%s", c)
			assert.Contains(t, c.Detail, "several servers answer at "+lb+"/metrics")
			assert.Contains(t, c.Detail, "--metrics-url")
		}
		for _, c := range r.Checks {
			assert.NotContains(t, strings.ToLower(c.Detail), "restart", "%s", c)
		}
		// The sampled gauges were one replica's at a time: not judged.
		for _, name := range []string{"kv_peak", "drain"} {
			c := checkNamed(t, r, name)
			assert.Equal(t, check.Invalid, c.Status, "%s", c)
			assert.Contains(t, c.Detail, "several servers answer at")
		}
	})
}

// otherClient wraps a server so that, once armed, the first time the
// measured client asks for a completion after a /metrics snapshot (the
// run's first), another client's request runs to its end on the same
// server first: a shared deployment's traffic, within the run.
func otherClient(t *testing.T, backend string) (url string, arm func()) {
	t.Helper()
	model := modelOf(t, backend)
	var armed, scraped, sent atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && armed.Load() {
			scraped.Store(true)
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "completions") && scraped.Load() && sent.CompareAndSwap(false, true) {
			body := `{"model":"` + model + `","prompt":"the other client","max_tokens":5,"ignore_eos":true}`
			resp, err := http.Post(backend+"/v1/completions", "application/json", strings.NewReader(body))
			if assert.NoError(t, err) {
				_ = resp.Body.Close()
				assert.Equal(t, http.StatusOK, resp.StatusCode)
			}
		}
		forward(w, r, backend)
	}))
	t.Cleanup(front.Close)
	return front.URL, func() { armed.Store(true) }
}

// modelOf is the model the server lists first.
func modelOf(t *testing.T, base string) string {
	resp, err := http.Get(base + "/v1/models")
	require.NoError(t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	i := strings.Index(buf.String(), `"id":"`)
	require.GreaterOrEqual(t, i, 0, "a model list: %s", buf.String())
	rest := buf.String()[i+len(`"id":"`):]
	return rest[:strings.Index(rest, `"`)]
}

// TestRealServerSharedTraffic: another client's request during a run
// makes the reconciliations INVALID with the excess named, never FAIL.
func TestRealServerSharedTraffic(t *testing.T) {
	testphase.Alone(t)
	target, arm := otherClient(t, startVLLMSim(t, serverSetup{maxNumSeqs: 32, maxModelLen: 4096}))
	ss := start(t, externalSuite(t, target, "shared", serverfamily.VLLM, ""), "shared")
	defer closeSession(t, ss)
	pt := pointNamed(t, ss, "ttft-tpot", "prompt=short/conc=1")
	arm()
	r, err := ss.Run(context.Background(), pt)
	require.NoError(t, err)
	for _, name := range reconciliations {
		c := checkNamed(t, r, name)
		assert.Equal(t, check.Invalid, c.Status, "%s", c)
		assert.Contains(t, c.Detail, "other traffic reached the server")
	}
	assert.Contains(t, checkNamed(t, r, "reconcile/request_success").Detail, "is 1 more than the client's")
	assert.Contains(t, checkNamed(t, r, "reconcile/generation_tokens").Detail, "is 5 more than the client's")
}
