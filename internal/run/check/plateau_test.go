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
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// TestBatchingDeploymentCaps: the simulator, judged as a deployment the
// suite did not start (no flags known), at concurrency 32. Capped by
// --max-num-seqs 8 its plateau is named max-num-seqs; with room for 64
// sequences but a KV cache of 1824 tokens (about 11 requests of 160) the
// plateau is named the KV cache's, not max-num-seqs (measured: about 12
// running, 11–12, in 36 of 37 queued samples, the cache 96% full). Steps
// run 4× faster than the timing model (--sim-slowdown 0.25): about 3 s.
func TestBatchingDeploymentCaps(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"max-num-seqs", []string{"--max-num-seqs", "8"}, "the server caps its batch at 8 running"},
		{"KV cache", []string{"--max-num-seqs", "64", "--gpu-memory-utilization", "0.1", "--max-model-len", "1024"}, "the KV cache limits the batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, err := profile.Builtin("basic")
			if err != nil {
				t.Fatal(err)
			}
			p = p.WithSimArgs("--sim-slowdown", "0.25", "--sim-cold-start", "0") // steps 4× faster: the test takes seconds
			srv, err := server.Run(context.Background(), p.WithExtraArgs(tc.flags...))
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close(context.Background())
			point := scenario.Point{
				Key:             "caps",
				Classes:         []workload.Class{{Name: "c", Weight: 1, Config: workload.Config{PromptTokens: 128, MaxTokens: 32, IgnoreEOS: true}}},
				Load:            load.Config{Concurrency: 32, Requests: 96},
				SamplerInterval: 50 * time.Millisecond,
				Scenario:        &scenario.Scenario{Name: "caps", Expect: scenario.Expect{Batching: true}},
			}
			res, err := pipeline.Run(context.Background(), srv, point)
			if err != nil {
				t.Fatal(err)
			}
			var got check.Result
			for _, r := range check.All(res, thresholds.Default().Scope("basic", "caps"), check.Facts{}) {
				if r.Name == "batching" {
					got = r
				}
			}
			if got.Status != check.Pass || !strings.Contains(got.Detail, tc.want) {
				t.Errorf("batching = %s, want PASS with %q", got, tc.want)
			}
		})
	}
}
