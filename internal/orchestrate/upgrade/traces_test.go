package upgrade

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// TestRunSimulatorTraces: with TorchProfile, a DIFFERENT verdict is
// followed by one profiled run of the regressed point on OLD and on NEW,
// whose Chrome traces land in traces/old and traces/new, listed in
// traces/index.md.
func TestRunSimulatorTraces(t *testing.T) {
	testphase.Alone(t) // real-time servers: under -race beside the race phase they fall behind (sim_real_time) and the verdict is the host's
	t.Parallel()
	var log bytes.Buffer
	dir := t.TempDir()
	const point = "profile=basic/scenario=ttft-tpot/prompt=short/conc=1"
	res, err := Run(context.Background(), Config{
		Suite:    suite.Config{Size: scenario.Quick, SimArgs: []string{"--sim-slowdown", "0.25"}},
		Old:      Side{Image: InProcess},
		New:      Side{Image: InProcess, SimArgs: []string{"--sim-slowdown", "0.5"}},
		Points:   []string{point},
		MinPairs: 6, MaxPairs: 6,
		Servers:      Keep,
		Dir:          dir,
		Log:          &log,
		TorchProfile: &torchprof.Settings{Window: 200 * time.Millisecond},
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if res.Decision() != gate.Different {
		t.Fatalf("decision %s, want DIFFERENT\n%s", res.Headline(), log.String())
	}
	if len(res.Traces) != 2 {
		t.Fatalf("%d captures, want OLD's and NEW's of the regressed point\n%s", len(res.Traces), log.String())
	}
	for i, c := range res.Traces {
		if c.Side != sideNames[i] || c.Point != point || c.Capture.Err != nil || c.Capture.Events == 0 {
			t.Errorf("capture %d: %s %s: %+v", i, c.Side, c.Point, c.Capture)
			continue
		}
		for _, f := range c.Capture.Files {
			if filepath.Dir(f) != filepath.Join(dir, TracesDir, c.Side) {
				t.Errorf("%s trace %s is not in traces/%s", c.Side, f, c.Side)
			}
		}
	}
	index, err := os.ReadFile(filepath.Join(dir, TracesDir, TracesIndex))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(index), "](old/") || !strings.Contains(string(index), "](new/") {
		t.Errorf("index.md does not link both sides' traces:\n%s", index)
	}
	for _, side := range sideNames {
		html, err := os.ReadFile(filepath.Join(dir, side, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(html), `href="../traces/`+side+`/`) {
			t.Errorf("%s/report.html does not link its side's traces", side)
		}
	}
}
