package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// TestServerDiesMidRun: the simulator's engine dies after three requests
// (--sim-fault-die-after 3). The run stops after five identical failures
// in a row, says so in its report metadata, and names the server as down
// with the log line where it died, instead of leaving only failed requests.
func TestServerDiesMidRun(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv, err := server.Run(ctx, p.WithSimArgs("--sim-fault-die-after", "3"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	pt := scenario.Point{
		Key:             "dies",
		Classes:         []workload.Class{{Name: "c", Weight: 1, Config: workload.Config{PromptTokens: 16, MaxTokens: 4, IgnoreEOS: true}}},
		Load:            load.Config{Concurrency: 1, Requests: 50, MaxConsecutiveFailures: 5},
		SamplerInterval: 50 * time.Millisecond,
	}
	res, err := pipeline.Run(ctx, srv, pt)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Summary.Completed, 3; got != want {
		t.Errorf("completed = %d, want %d", got, want)
	}
	if !errors.Is(res.ServerDown, server.ErrServerDown) || !strings.Contains(res.ServerDown.Error(), "EngineCore died after 3 requests") {
		t.Errorf("ServerDown = %v, want the server down with its log line", res.ServerDown)
	}
	meta := res.ReportMeta()
	if !strings.HasPrefix(meta.StoppedEarly, "stopped early after 5 consecutive identical failures") || meta.Interrupted {
		t.Errorf("meta stopped_early %q interrupted %v, want the streak and false", meta.StoppedEarly, meta.Interrupted)
	}
}

// TestRow12_ShortOutputsFromPoint: a point sent with ignore_eos promises
// its max_tokens; the summary checks it (a server that stops early is
// warned about in stats, see the CLI's TestRow12_ShortOutputsWarned), and
// a point without ignore_eos promises nothing.
func TestRow12_ShortOutputsFromPoint(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	srv, err := server.Run(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(ctx)
	for _, tc := range []struct {
		name      string
		ignoreEOS bool
		want      int // ExpectedOutputTokens
	}{
		{"ignore_eos", true, 6}, // exactly max_tokens promised
		{"eos", false, 0},       // the model may stop: nothing promised
	} {
		pt := scenario.Point{
			Key:             tc.name,
			Classes:         []workload.Class{{Name: "c", Weight: 1, Config: workload.Config{PromptTokens: 16, MaxTokens: 6, IgnoreEOS: tc.ignoreEOS}}},
			Load:            load.Config{Concurrency: 1, Requests: 2},
			SamplerInterval: 50 * time.Millisecond,
		}
		res, err := pipeline.Run(ctx, srv, pt, pipeline.WithoutMetrics())
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Summary.ExpectedOutputTokens; got != tc.want || res.Summary.ShortOutputs != 0 {
			t.Errorf("%s: expected output tokens %d (short %d), want %d (0)", tc.name, got, res.Summary.ShortOutputs, tc.want)
		}
	}
}
