package scrape

import (
	"context"

	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The label sets of a real vLLM /metrics (vllm/v1/metrics/loggers.py):
// model_name then engine, one engine per data-parallel rank, finished_reason
// on request_success, cache_config_info without model_name, _created
// series, process_start_time_seconds. A run's delta is summed over the
// engines and read per reason.
func TestRealVLLMLabelShape(t *testing.T) {
	before, after := fixturePair(t, "vllm-v1-labels-dp2-before.prom", "vllm-v1-labels-dp2-after.prom")
	assert.Equal(t, []string{"0", "1"}, after.Engines)
	assert.Equal(t, []string{"meta-llama/Llama-3.1-8B-Instruct"}, after.Models)
	assert.NotZero(t, after.ProcessStart)
	info, err := after.Info(CacheConfigInfo)
	require.NoError(t, err)
	assert.Equal(t, "27153", info["num_gpu_blocks"])
	assert.NotContains(t, info, LabelEngine)
	assert.Empty(t, after.Warnings, "the two engines' cache_config_info agree")

	d, err := Diff(before, after)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		want float64
	}{
		// 10 requests on engine 0 and 6 on engine 1, summed.
		{RequestSuccessTotal, 16},
		{PromptTokensTotal, 16 * 128},
		{GenerationTokensTotal, 16 * 64},
	} {
		got, err := d.Counter(tc.name)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	by, err := d.CounterBy(RequestSuccessTotal, "finished_reason")
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"stop": 16, "length": 0, "abort": 0}, by)
	h, err := d.Histogram(TimeToFirstTokenSeconds)
	require.NoError(t, err)
	assert.Equal(t, 16.0, h.Count)
	it, err := d.Histogram(IterationTokensTotal)
	require.NoError(t, err, "iteration_tokens_total is a histogram despite its name")
	assert.Equal(t, 12.0+8, it.Count, "engine steps, not requests")
}

// replica serves a fixture's exposition, then another once switched.
type replica struct {
	*httptest.Server
	page atomic.Pointer[string]
}

func newReplica(t *testing.T, name string) *replica {
	t.Helper()
	r := &replica{}
	r.serve(t, name)
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		p := r.page.Load()
		if p == nil {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(*p))
	}))
	t.Cleanup(r.Close)
	return r
}

// serve switches the page to a fixture ("" answers 503).
func (r *replica) serve(t *testing.T, name string) {
	t.Helper()
	if name == "" {
		r.page.Store(nil)
		return
	}
	b, err := os.ReadFile(fixture(name))
	require.NoError(t, err)
	s := string(b)
	r.page.Store(&s)
}

// A fleet's snapshot sums its replicas; each replica's counters are
// subtracted from its own, and a restart is judged per replica.
func TestFleet(t *testing.T) {
	ctx := context.Background()
	a := newReplica(t, "vllm-v1-labels-dp2-before.prom")
	b := newReplica(t, "vllm-v1-labels-dp2-before.prom")
	f := NewFleet([]string{a.URL + "/metrics", b.URL + "/metrics"})
	before, err := f.Scrape(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{a.URL + "/metrics", b.URL + "/metrics"}, before.Replicas)
	assert.Len(t, before.ProcessStarts, 2)
	assert.Contains(t, before.Source, "2 replicas")

	a.serve(t, "vllm-v1-labels-dp2-after.prom")
	after, err := f.Scrape(ctx)
	require.NoError(t, err)
	d, err := Diff(before, after)
	require.NoError(t, err, "the same process start times: no restart")
	got, err := d.Counter(RequestSuccessTotal)
	require.NoError(t, err)
	assert.Equal(t, 16.0, got, "replica a served the run, replica b nothing")
	total, err := after.Counter(RequestSuccessTotal)
	require.NoError(t, err)
	assert.Equal(t, 73.0+57, total, "the replicas' totals are summed")

	// Replica b restarts: its own start time moves, and the error names it.
	restarted := strings.Replace(*b.page.Load(), "process_start_time_seconds 1.76490271258e+09", "process_start_time_seconds 1.76490299e+09", 1)
	b.page.Store(&restarted)
	after, err = f.Scrape(ctx)
	require.NoError(t, err)
	_, err = Diff(before, after)
	var re *ResetError
	require.ErrorAs(t, err, &re)
	require.Len(t, re.Resets, 1)
	assert.Equal(t, `{replica="`+b.URL+`/metrics"}`, re.Resets[0].Series)
	assert.Contains(t, re.Resets[0].Reason, "this replica restarted")

	// A replica that does not answer fails the whole scrape, by its URL.
	b.serve(t, "")
	_, err = f.Scrape(ctx)
	var fe *FetchError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, b.URL+"/metrics", fe.URL)
	assert.Equal(t, http.StatusServiceUnavailable, fe.Status)
}

// Replicas that disagree on a family's type run different servers.
func TestFleetTypeMismatch(t *testing.T) {
	a := newReplica(t, "vllm-v1-labels-dp2-before.prom")
	b := newReplica(t, "crafted-untyped.prom")
	_, err := NewFleet([]string{a.URL, b.URL}).Scrape(context.Background())
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, pe.Msg, "cannot be summed")
}

// WithModel keeps the measured model's series where the server labels
// them by model_name.
func TestWithModel(t *testing.T) {
	tests := []struct {
		name      string
		model     string
		running   float64 // num_requests_running summed
		kept      string  // Snapshot.Model
		warning   string  // a warning containing this, "" none
		allModels []string
	}{
		// No model: every model's series summed, as before.
		{"all", "", 3 + 4 + 1 + 0, "", "", []string{"qwen-a", "qwen-b"}},
		// One model of two: the other's series are left out.
		{"qwen-a", "qwen-a", 3 + 4, "qwen-a", "", []string{"qwen-a", "qwen-b"}},
		{"qwen-b", "qwen-b", 1 + 0, "qwen-b", "", []string{"qwen-a", "qwen-b"}},
		// A name no series carries (an alias): summed, and said.
		{"alias", "qwen", 3 + 4 + 1 + 0, "", `no series is labelled model_name="qwen"`, []string{"qwen-a", "qwen-b"}},
	}
	b, err := os.ReadFile(fixture("crafted-two-engines.prom"))
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(b) }))
			defer srv.Close()
			s, err := NewScraper(srv.URL, WithModel(tc.model)).Scrape(context.Background())
			require.NoError(t, err)
			got, err := s.Gauge(NumRequestsRunning)
			require.NoError(t, err)
			assert.Equal(t, tc.running, got)
			assert.Equal(t, tc.kept, s.Model)
			assert.Equal(t, tc.allModels, s.Models)
			if tc.warning == "" {
				for _, w := range s.Warnings {
					assert.NotContains(t, w, "model_name")
				}
				return
			}
			assert.True(t, strings.Contains(strings.Join(s.Warnings, "\n"), tc.warning), "warnings: %q", s.Warnings)
		})
	}
}
