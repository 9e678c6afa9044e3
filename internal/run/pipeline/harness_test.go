package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// startSim starts the basic profile's in-process simulator with extra
// simulator arguments.
func startSim(t *testing.T, simArgs ...string) server.Server {
	t.Helper()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Run(context.Background(), p.WithSimArgs(append([]string{"--sim-cold-start", "0"}, simArgs...)...), server.WithBackend(server.KindSim))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	return srv
}

// sweepPoint is the quick sweep's point at concurrency c.
func sweepPoint(t *testing.T, c int) scenario.Point {
	t.Helper()
	sc, err := scenario.Builtin("concurrency-sweep")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range sc.Points(scenario.Quick) {
		if p.Load.Concurrency == c {
			return p
		}
	}
	t.Fatalf("no point at concurrency %d", c)
	return scenario.Point{}
}

// The whole pipeline against the simulator: every request succeeds, the
// server's counters reconcile, the figures are there, every check passes.
func TestRunAgainstSimulator(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	p := sweepPoint(t, 4)
	p.SamplerInterval = 50 * time.Millisecond
	res, err := pipeline.Run(context.Background(), srv, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Summary.Completed, p.Load.Requests; got != want {
		t.Errorf("completed %d of %d", got, want)
	}
	if res.Delta == nil || res.ScrapeErr != nil || !res.Drained {
		t.Fatalf("delta %v, scrape error %v, drained %v", res.Delta != nil, res.ScrapeErr, res.Drained)
	}
	m := res.Metrics()
	for _, unit := range []string{units.TTFTP99, units.TPOTP50, units.TokPerSec, units.ErrPct, units.KVPeakPct, units.Preemptions, units.RunningPeak, units.TokPerChunk} {
		if _, ok := m[unit]; !ok {
			t.Errorf("no %s among %v", unit, m)
		}
	}
	if _, ok := m[units.SpecAccept]; ok {
		t.Error("spec-accept-% reported without speculative decoding")
	}
	for unit := range m { // the bench output speaks package units' names only
		if _, ok := units.Lookup(unit); !ok {
			t.Errorf("%s: reported, but not declared in package units", unit)
		}
	}
	scope := thresholds.Default().Scope("basic", "concurrency-sweep")
	for _, c := range check.All(res, scope, check.Facts{}) {
		if c.Failed(true) {
			t.Errorf("check %s", c)
		}
	}
	meta := res.ReportMeta()
	if meta.Backend != "openai-chat" || meta.MaxConcurrency != 4 || meta.ModelID != "Qwen/Qwen3-0.6B" {
		t.Errorf("report meta %+v", meta)
	}
}

// A /metrics page that cannot be parsed: the run still measures the
// client side, and every server-side check fails naming the problem.
func TestRunWithBrokenMetrics(t *testing.T) {
	t.Parallel()
	srv := startSim(t, "--sim-fault-metrics-malformed")
	res, err := pipeline.Run(context.Background(), srv, sweepPoint(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Completed == 0 {
		t.Fatal("the client side must still be measured")
	}
	if res.ScrapeErr == nil || !strings.Contains(res.ScrapeErr.Error(), "line") {
		t.Fatalf("scrape error %v, want the offending line named", res.ScrapeErr)
	}
	for _, c := range check.All(res, thresholds.Empty().Scope("basic", "x"), check.Facts{}) {
		if c.Name == "requests" {
			continue
		}
		if c.Status == check.Pass {
			t.Errorf("check %s passed without metrics", c)
		}
	}
}

// WithoutMetrics skips /metrics: no server figures, no scrape error.
func TestRunWithoutMetrics(t *testing.T) {
	t.Parallel()
	srv := startSim(t)
	res, err := pipeline.Run(context.Background(), srv, sweepPoint(t, 1), pipeline.WithoutMetrics())
	if err != nil {
		t.Fatal(err)
	}
	if res.Before != nil || res.Series != nil || res.Delta != nil {
		t.Error("WithoutMetrics scraped anyway")
	}
	if _, ok := res.Metrics()[units.KVPeakPct]; ok {
		t.Error("a server figure without metrics")
	}
}

// A point whose longest request does not fit the server's context length
// is refused before any request, with the numbers; one that fits runs.
func TestRunRefusesPointBeyondContext(t *testing.T) {
	t.Parallel()
	srv := startSim(t, "--max-model-len", "1024")
	sc, err := scenario.Builtin("long-prefill-mix")
	if err != nil {
		t.Fatal(err)
	}
	p := sc.Points(scenario.Quick)[0]
	before := scrapeCounter(t, srv, scrape.RequestSuccessTotal)
	_, err = pipeline.Run(context.Background(), srv, p)
	var ce *pipeline.ContextError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a *pipeline.ContextError", err)
	}
	for _, want := range []string{"long-prefill-mix/" + p.Key, "class long", "more than the 1024 the server accepts", "max_model_len on /v1/models", "no request was sent"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if ce.Longest.Tokens() <= 1024 || ce.MaxModelLen != 1024 {
		t.Errorf("longest %d tokens, max_model_len %d", ce.Longest.Tokens(), ce.MaxModelLen)
	}
	if after := scrapeCounter(t, srv, scrape.RequestSuccessTotal); after != before {
		t.Errorf("request_success_total moved from %g to %g: requests were sent", before, after)
	}
	if _, err := pipeline.Run(context.Background(), srv, sweepPoint(t, 1)); err != nil {
		t.Errorf("a point that fits: %v", err)
	}
}

// scrapeCounter reads a counter (canonical name) summed over its series.
func scrapeCounter(t *testing.T, srv server.Server, name string) float64 {
	t.Helper()
	snap, err := scrape.NewScraper(srv.MetricsURL()).Scrape(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, err := snap.Counter(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
