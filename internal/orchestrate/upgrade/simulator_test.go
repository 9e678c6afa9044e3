package upgrade

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// TestRunSimulator runs the gate end to end on the embedded simulator:
// NEW's steps take twice as long, which the gate must call DIFFERENT at
// the first comparison, with every server stopped and both sides' files
// and results folders written. Both sides run at a quarter of the preset's
// step time (the later --sim-slowdown wins), to keep the test short.
func TestRunSimulator(t *testing.T) {
	testphase.Alone(t) // real-time servers: under -race beside the race phase they fall behind (sim_real_time) and the verdict is the host's
	t.Parallel()
	var log bytes.Buffer
	dir := t.TempDir()
	res, err := Run(context.Background(), Config{
		Suite:    suite.Config{Size: scenario.Quick, SimArgs: []string{"--sim-slowdown", "0.25"}},
		Old:      Side{Image: InProcess},
		New:      Side{Image: InProcess, SimArgs: []string{"--sim-slowdown", "0.5"}},
		Points:   []string{"profile=basic/scenario=ttft-tpot/prompt=short/conc=1"},
		MinPairs: 6, MaxPairs: 6,
		Dir: dir,
		Log: &log,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if res.Decision() != gate.Different {
		t.Errorf("decision %s, want DIFFERENT\n%s", res.Headline(), log.String())
	}
	var slower bool
	for _, row := range res.Report.Rows {
		if row.Unit == "tpot-p50-ns" && row.Verdict == gate.Regression && row.DeltaPct > 50 {
			slower = true
		}
	}
	if !slower {
		t.Errorf("tpot-p50-ns is not a regression of more than +50%%:\n%s", log.String())
	}
	if res.Starts != 7 {
		t.Errorf("%d starts, want 7 (6 pairs, restart)", res.Starts)
	}
	for _, f := range []string{OldFile, NewFile, "old/summary.json", "new/summary.json", "new/samples.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
