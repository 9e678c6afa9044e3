package record_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/capacity"
	"github.com/vllmperf/vllmperf/internal/orchestrate/knee"
	"github.com/vllmperf/vllmperf/internal/orchestrate/record"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/results/report"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// mixedRun runs the quick long-prefill-mix point (two classes) against the
// in-process simulator.
func mixedRun(t *testing.T) *result.Result {
	t.Helper()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Run(context.Background(), p.WithSimArgs("--sim-cold-start", "0"), server.WithBackend(server.KindSim))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	sc, err := scenario.Builtin("long-prefill-mix")
	if err != nil {
		t.Fatal(err)
	}
	pt := sc.Points(scenario.Quick)[0]
	pt.Load.Requests = 16
	pt.SamplerInterval = 50 * time.Millisecond
	res, err := pipeline.Run(context.Background(), srv, pt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestWriteAndRead(t *testing.T) {
	t.Parallel()
	res := mixedRun(t)
	dir := filepath.Join(t.TempDir(), "r")
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	checks := check.All(res, thresholds.Default().Scope("basic", "long-prefill-mix"), check.Facts{})
	name := "profile=basic/scenario=long-prefill-mix/" + res.Point.Key
	w.SetConfig("basic", map[string]string{"backend": "sim"})
	record.Add(w, name, "basic", res, res.Metrics(), checks)
	record.Add(w, name, "basic", res, res.Metrics(), checks) // a second repetition
	w.AddKnee(record.Knee("basic", "concurrency-sweep", knee.Result{Knee: 8, Saturation: 16, Recommended: 8, Explanation: []string{"why"}}))
	capacity := capacitySearch(t)
	w.AddCapacity(record.Capacity("basic", "slo-capacity", capacity))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := results.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Runs) != 2 || s.Runs[1].Rep != 1 || s.Runs[0].Scenario != "long-prefill-mix" || s.Config["basic"]["backend"] != "sim" {
		t.Fatalf("runs %+v", s.Runs)
	}
	r := s.Runs[0]
	var vllm map[string]any
	if err := json.Unmarshal(r.Result, &vllm); err != nil {
		t.Fatal(err)
	}
	if vllm["completed"] != float64(16) {
		t.Errorf("vLLM result completed = %v", vllm["completed"])
	}
	// The steady window's figures stand beside the bench metrics, absent
	// when the run has no window (16 requests at concurrency 16 never
	// hold the concurrency with one to spare).
	if want := res.SteadyMetrics(); !maps.Equal(r.SteadyMetrics, want) || (want == nil) != (r.SteadyMetrics == nil) {
		t.Errorf("steady_metrics %v, want %v (%s)", r.SteadyMetrics, want, res.Windows().NoSteady)
	}
	if len(r.Classes) != 2 || !json.Valid(r.Classes["short"]) || !json.Valid(r.Classes["long"]) {
		t.Errorf("classes %v", r.Classes)
	}
	if r.Server.Counters["generation_tokens_total"] == 0 || r.Server.Histograms["time_to_first_token_seconds"].Count == 0 {
		t.Errorf("server side %+v", r.Server)
	}
	if lines := countLines(t, filepath.Join(dir, results.SamplesFile)); lines != 2*len(res.Samples()) {
		t.Errorf("samples.jsonl has %d lines, want %d", lines, 2*len(res.Samples()))
	}
	if lines := countLines(t, filepath.Join(dir, results.TimeSeriesFile)); lines != 2*len(res.Series.Points) || lines == 0 {
		t.Errorf("timeseries.jsonl has %d lines, want %d", lines, 2*len(res.Series.Points))
	}

	if len(s.Capacities) != 1 || s.Capacities[0].Statement != capacity.Statement() || len(s.Capacities[0].Runs) != len(capacity.Trials) ||
		!s.Capacities[0].Found || s.Capacities[0].Over != "rate" || s.Capacities[0].Runs[0].TTFTP99Ms == nil {
		t.Errorf("capacities %+v", s.Capacities)
	}
	var out bytes.Buffer
	if err := report.Text(&out, s); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{name, "basic/concurrency-sweep: recommended concurrency limit 8 (knee 8, saturation 16, SLO none)", "  why",
		"basic/slo-capacity: " + capacity.Statement()} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report text lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Count(out.String(), name) != 1 {
		t.Errorf("a repeated run must show once (its last repetition):\n%s", out.String())
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("%s line %d is not JSON", path, n+1)
		}
		n++
	}
	return n
}

// capacitySearch is a search over a deployment that keeps the SLO up to
// 10 req/s.
func capacitySearch(t *testing.T) *capacity.Result {
	t.Helper()
	probe := func(_ context.Context, level float64) (capacity.Trial, error) {
		good := 100
		if level > 10 {
			good = 50
		}
		return capacity.Trial{Requests: 100, Good: good, HasP99: true, TTFTP99: 120, TPOTP99: 30, ReqPerSec: level, Users: level}, nil
	}
	cfg := capacity.Config{Mode: capacity.Rate, Start: 4, Capacity: thresholds.DefaultCapacity, SLO: stats.SLO{TTFT: time.Second}}
	r, err := capacity.Search(context.Background(), cfg, probe)
	if err != nil || !r.Found {
		t.Fatalf("search: %v %+v", err, r)
	}
	return r
}
