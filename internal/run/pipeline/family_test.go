package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily/familytest"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// acmeServer is a server of the test family familytest.Acme: the OpenAI
// API as vLLM serves it, and a /metrics whose names are Acme's (acme:
// prefix, tokens_out_total for the generated tokens), beside one vLLM
// series that must be ignored. It records every request body.
type acmeServer struct {
	mu                         sync.Mutex
	bodies                     []map[string]any
	requests, prompt, generate int
}

func (a *acmeServer) start(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"object":"list","data":[{"id":"acme-model","object":"model","max_model_len":100000}]}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", a.chat)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		fmt.Fprintf(w, "# TYPE acme:num_requests_running gauge\nacme:num_requests_running 0\n"+
			"# TYPE acme:num_requests_waiting gauge\nacme:num_requests_waiting 0\n"+
			"# TYPE acme:kv_used_ratio gauge\nacme:kv_used_ratio 0.25\n"+
			"# TYPE acme:prompt_tokens_total counter\nacme:prompt_tokens_total %d\n"+
			"# TYPE acme:tokens_out_total counter\nacme:tokens_out_total %d\n"+
			"# TYPE acme:request_success_total counter\nacme:request_success_total{finished_reason=\"length\"} %d\n"+
			"# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total 999999\n",
			a.prompt, a.generate, a.requests)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts
}

// chat streams max_tokens words, one a chunk, then the usage, and counts
// them for /metrics before the stream ends.
func (a *acmeServer) chat(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n, _ := body["max_tokens"].(float64)
	prompt := 0
	if msgs, ok := body["messages"].([]any); ok {
		for _, m := range msgs {
			content, _ := m.(map[string]any)["content"].(string)
			prompt += len(strings.Fields(content))
		}
	}
	a.mu.Lock()
	a.bodies = append(a.bodies, body)
	a.requests++
	a.prompt += prompt
	a.generate += int(n)
	a.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range int(n) {
		finish := "null"
		if i == int(n)-1 {
			finish = `"length"`
		}
		fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"acme-model\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word\"},\"finish_reason\":%s}]}\n\n", finish)
	}
	fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"acme-model\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", prompt, int(n), prompt+int(n))
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// TestSecondFamilyPlugsIn: a server family other than vLLM is a value
// (familytest.Acme) handed to server.Run; the run then reads the server's
// /metrics by Acme's names, sends Acme's request extras, and its checks
// see the same canonical counters as on vLLM, with no edit to scrape,
// openai, server or harness. The vLLM series on the page is not Acme's
// and is left out.
func TestSecondFamilyPlugsIn(t *testing.T) {
	t.Parallel()
	acme := &acmeServer{}
	ts := acme.start(t)
	fam := familytest.Acme()
	srv, err := server.Run(context.Background(), profile.Deployment("acme"), server.WithBackend(server.KindExternal), server.WithTarget(ts.URL), server.WithFamily(fam))
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	require.Same(t, fam, server.FamilyOf(srv))

	point := scenario.Point{Key: "conc=2", SamplerInterval: 50 * time.Millisecond,
		Classes: []workload.Class{{Name: "rand", Weight: 1, Config: workload.Config{PromptTokens: 16, MaxTokens: 5, MinTokens: 2, IgnoreEOS: true}}},
		Load:    load.Config{Concurrency: 2, Requests: 6, Warmup: 1}}
	res, err := pipeline.Run(context.Background(), srv, point, pipeline.WithDrainTimeout(5*time.Second))
	require.NoError(t, err)
	require.NoError(t, res.ScrapeErr)
	assert.Equal(t, 6, res.Summary.Completed)

	// Acme's names read as the canonical ones, the deltas this run's
	// (the before snapshot precedes the warm-up request).
	gen, err := res.Delta.Counter(scrape.GenerationTokensTotal)
	require.NoError(t, err)
	assert.Equal(t, 7.0*5, gen, "Δ tokens_out_total: 1 warm-up + 6 measured requests, 5 tokens each")
	ok, err := res.Delta.Counter(scrape.RequestSuccessTotal)
	require.NoError(t, err)
	assert.Equal(t, 7.0, ok)
	kv, err := res.After.Gauge(scrape.KVCacheUsagePerc)
	require.NoError(t, err)
	assert.Equal(t, 0.25, kv)
	assert.Same(t, fam, res.After.Family())
	var ignored []string
	for _, ig := range res.After.Ignored {
		ignored = append(ignored, ig.Name)
	}
	assert.Contains(t, ignored, "vllm:generation_tokens_total", "another family's series is not Acme's")
	_, err = res.After.Counter(scrape.NumPreemptionsTotal)
	require.ErrorIs(t, err, scrape.ErrNotAvailable)
	assert.Contains(t, err.Error(), "acme:num_preemptions_total", "a missing metric is named as the family exposes it")

	// The checks read the same canonical counters: the client's counts
	// reconcile with Acme's; what Acme lacks is named as Acme exposes it.
	passed := map[string]bool{}
	for _, c := range check.All(res, thresholds.Default().Scope("basic", "x"), check.Facts{}) {
		switch {
		case c.Status == check.Pass:
			passed[c.Name] = true
		case c.Status == check.NotAvailable && strings.HasPrefix(c.Name, "reconcile/"):
			assert.Contains(t, c.Detail, "the exposition has no acme:", "%s: %s", c.Name, c.Detail)
		}
		if c.Name == "preemptions" {
			assert.Equal(t, check.NotAvailable, c.Status)
			assert.Contains(t, c.Detail, "acme:num_preemptions_total")
		}
	}
	for _, name := range []string{"reconcile/generation_tokens", "reconcile/prompt_tokens", "reconcile/request_success", "kv_peak"} {
		assert.True(t, passed[name], "%s passes on Acme's counters (passed: %v)", name, passed)
	}

	// Acme's extras in every request, vLLM's in none.
	acme.mu.Lock()
	defer acme.mu.Unlock()
	require.Len(t, acme.bodies, 7, "1 warm-up + 6 measured")
	for _, b := range acme.bodies {
		assert.Equal(t, 2.0, b["min_new_tokens"])
		assert.Equal(t, true, b["stop_at_eos_never"])
		assert.NotContains(t, b, "min_tokens")
		assert.NotContains(t, b, "ignore_eos")
		assert.Equal(t, map[string]any{"include_usage": true}, b["stream_options"], "Acme takes no continuous usage")
	}
}
