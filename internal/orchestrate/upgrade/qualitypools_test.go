package upgrade

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
)

// The committed pools of TestGateQualityCommitted (testdata/quality):
// recorded outputs of the simulator, written by TestRecordQualityPools.
const (
	envRecord = "VLLMPERF_RECORD_QUALITY" // 1: record the pools again
	poolRuns  = 16                        // runs of every point per pool (whole pairs for the interleaved gate)
)

// The two sets of pools: the gate's rules were chosen on tune and are
// scored on score. Their seeds start at distinct tops: none is shared with
// another pool, the other set or the hand-run pools (1, 2, …).
var poolSets = []struct {
	dir     string
	seedTop int
}{
	{"testdata/quality/tune", 1000000},
	{"testdata/quality/score", 2000000},
}

// poolPoints are the points of the committed pools: two profiles (so that
// one can be slowed alone), two points each, the cheapest that exercise
// prefill alone and batched decoding.
var poolPoints = []string{
	"profile=basic/scenario=ttft-tpot/prompt=short/conc=1",
	"profile=basic/scenario=concurrency-sweep/conc=4",
	"profile=speculative/scenario=ttft-tpot/prompt=short/conc=1",
	"profile=speculative/scenario=concurrency-sweep/conc=4",
}

// poolConds are the conditions pooled, with their simulator arguments.
var poolConds = []struct {
	name string
	args []string
}{
	{"base", nil},
	{"aa", nil},
	{"slow5", []string{"--sim-slowdown", "1.05"}},
	{"slow10", []string{"--sim-slowdown", "1.10"}},
}

// TestRecordQualityPools records the committed pools (minutes):
//
//	VLLMPERF_RECORD_QUALITY=1 VLLMPERF_SIZE=quick go test -count=1 -timeout 90m \
//	  -run TestRecordQualityPools -v ./internal/orchestrate/upgrade/
//
// Every run of every point is on a server started for it with a seed of
// its own: seq-<cond>.txt are the baseline gate's sides (base is the
// stored baseline, the rest new runs); ab-<cond>-old.txt and -new.txt the
// interleaved gate's pairs, OLD and NEW alternating which goes first.
func TestRecordQualityPools(t *testing.T) {
	if os.Getenv(envRecord) != "1" {
		t.Skipf("records the committed pools (minutes): set %s=1", envRecord)
	}
	base, err := suite.FromEnv(true)
	if err != nil {
		t.Fatal(err)
	}
	targets, err := SelectPoints(Builtin(), base.Size, poolPoints)
	if err != nil {
		t.Fatal(err)
	}
	which := os.Getenv("VLLMPERF_RECORD_WHICH") // seq, ab or both
	for _, set := range poolSets {
		if err := os.MkdirAll(set.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		recordSet(t, base, targets, set.dir, set.seedTop, which)
	}
}

// recordSet records one set of pools into dir.
func recordSet(t *testing.T, base suite.Config, targets []Target, qualityDir string, seedTop int, which string) {
	t.Helper()
	for ci, c := range poolConds {
		seed := seedTop + ci*100000
		if which != "ab" {
			recordPool(t, base, targets, []poolSide{{filepath.Join(qualityDir, "seq-"+c.name+".txt"), c.args, seed}})
		}
		if c.name == "base" || which == "seq" {
			continue
		}
		recordPool(t, base, targets, []poolSide{
			{filepath.Join(qualityDir, "ab-"+c.name+"-old.txt"), nil, seed + 10000},
			{filepath.Join(qualityDir, "ab-"+c.name+"-new.txt"), c.args, seed + 20000},
		})
	}
}

// poolSide is one file of a pool: its simulator arguments and first seed.
type poolSide struct {
	file string
	args []string
	seed int
}

// recordPool writes poolRuns runs of every target to each side's file,
// each run on a server of its own with a seed of its own. With two sides
// (OLD, NEW) the runs alternate which side goes first, as the upgrade
// gate's pairs do, so that the machine's drift falls on both.
func recordPool(t *testing.T, base suite.Config, targets []Target, sides []poolSide) {
	t.Helper()
	if exists(sides[len(sides)-1].file) {
		t.Logf("%s: kept", sides[0].file)
		return
	}
	ctx := context.Background()
	su, err := suite.New(base)
	if err != nil {
		t.Fatal(err)
	}
	files := make([]*benchFile, len(sides))
	for i, sd := range sides {
		if files[i], err = createBenchFile(sd.file+".tmp", su.UnitLines()); err != nil {
			t.Fatal(err)
		}
	}
	for run := range poolRuns {
		for k := range sides {
			i := k
			if run%2 == 1 {
				i = len(sides) - 1 - k
			}
			for ti, tg := range targets {
				recordRun(ctx, t, base, tg, files[i], append(slices.Clone(sides[i].args), "--sim-seed", strconv.Itoa(sides[i].seed+run*10+ti)))
			}
		}
	}
	for i, sd := range sides {
		if err := files[i].close(); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(sd.file+".tmp", sd.file); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d runs of %d points", sd.file, poolRuns, len(targets))
	}
}

// recordRun starts a server for tg with args, runs the point once into bf
// and stops the server.
func recordRun(ctx context.Context, t *testing.T, base suite.Config, tg Target, bf *benchFile, args []string) {
	t.Helper()
	c := base
	c.ResultsDir = ""
	c.SimArgs = append(slices.Clone(base.SimArgs), args...)
	c.Profiles, c.Scenarios = []string{tg.Profile}, []string{tg.Point.Scenario.Name}
	s, err := suite.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := s.Start(ctx, tg.Profile)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close(ctx)
	r, err := ss.Run(ctx, tg.Point)
	if err != nil {
		t.Fatal(err)
	}
	if err := bf.add(ss.ConfigLines, r.Name, r.Metrics); err != nil {
		t.Fatal(err)
	}
}
