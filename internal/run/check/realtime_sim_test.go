package check_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/vllmsim/simpace"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// TestSimBehindRealTimeIsInvalid: the simulator in process, its steps made
// far shorter than any host can pace (--sim-slowdown 0.000001: about 10 ns
// each), loses most of the run to the host; the run's sim_real_time check
// reads that from the scrapes around it and says INVALID by name, with the
// share and the seconds, failing the run even when not strict. The model,
// not the host's load, decides: the loop's own work per step (a microsecond
// or more on any host) exceeds the step a hundredfold, and 4,000 steps per
// request make each busy spell far longer than the 2 ms catch-up window
// below which lateness is absorbed, not counted.
func TestSimBehindRealTimeIsInvalid(t *testing.T) {
	t.Parallel()
	srv := startSim(t, "--sim-slowdown", "0.000001", "--sim-cold-start", "0")
	p := scenario.Point{
		Key:             "behind",
		Classes:         []workload.Class{{Name: "c", Weight: 1, Config: workload.Config{PromptTokens: 32, MaxTokens: 4000, IgnoreEOS: true}}},
		Load:            load.Config{Concurrency: 2, Requests: 4},
		SamplerInterval: 50 * time.Millisecond,
	}
	res, err := pipeline.Run(context.Background(), srv, p)
	if err != nil {
		t.Fatal(err)
	}
	results := check.All(res, thresholds.Default().Scope("basic", "behind"), check.Facts{Started: true})
	var got *check.Result
	for i, r := range results {
		if r.Name == check.SimRealTime {
			got = &results[i]
		}
	}
	if got == nil {
		t.Fatalf("no %s check for the simulator:\n%v", check.SimRealTime, results)
	}
	if got.Status != check.Invalid || !got.Failed(false) {
		t.Fatalf("%s = %s, want INVALID (failing even when not strict)", check.SimRealTime, got)
	}
	for _, want := range []string{"fell behind real time", "the host's, not the model's", simpace.MetricLostSeconds} {
		if !strings.Contains(got.Detail, want) {
			t.Errorf("detail lacks %q:\n%s", want, got.Detail)
		}
	}
	lost, err := res.Delta.Counter(simpace.MetricLostSeconds)
	if err != nil || lost <= 0 {
		t.Errorf("Δ%s = %v (%v), want > 0", simpace.MetricLostSeconds, lost, err)
	}
	t.Logf("%s", got)
}
