package predict_test

import (
	"context"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/predict"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
)

// tolerance is how far a point's measured phase on the embedded simulator
// (real time, HTTP and all) may be from its prediction (simulated time,
// the engine alone), as a ratio: measured/predicted within
// [1/tolerance, tolerance].
const tolerance = 1.35

// TestTimingPredictionMatchesSimulatorRun (TIMED: real time, run alone) runs quick points of the basic profile
// on the embedded simulator with the h100 preset and compares each
// measured phase with the prediction of the same point: the same engine,
// preset and workload, in simulated time.
func TestTimingPredictionMatchesSimulatorRun(t *testing.T) {
	testphase.Timed(t)
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	simArgs := []string{"--sim-gpu", "h100", "--sim-cold-start", "0", "--sim-slowdown", "4"}
	p = p.WithSimArgs(simArgs...)
	opts, err := config.ParseArgs(append([]string{p.Model}, p.SimArgs()...))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Run(context.Background(), p, server.WithBackend(server.KindSim))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	for _, tc := range []struct{ scenario, point string }{
		{"ttft-tpot", "prompt=medium/conc=1"}, // one request at a time: prefill and decode steps
		{"concurrency-sweep", "conc=8"},       // batched decoding
		{"long-prefill-mix", "conc=16"},       // long prefills among short requests
	} {
		pt := findPoint(t, tc.scenario, tc.point)
		want, err := predict.PredictPoint(opts.Config, p.ServedName(), pt, 1)
		if err != nil {
			t.Fatal(err)
		}
		res, err := pipeline.Run(context.Background(), srv, pt)
		if err != nil {
			t.Fatal(err)
		}
		got := res.Load.End.Sub(res.Load.Start)
		ratio := got.Seconds() / want.Measured.Seconds()
		t.Logf("%s/%s: measured %v, predicted %v: ×%.2f", tc.scenario, tc.point, got.Round(time.Millisecond), want.Measured.Round(time.Millisecond), ratio)
		if ratio > tolerance || ratio < 1/tolerance {
			t.Errorf("%s/%s: measured %v, predicted %v: ×%.2f, outside ×%.2f either way", tc.scenario, tc.point, got, want.Measured, ratio, tolerance)
		}
	}
}

// findPoint is scenario name's quick point key.
func findPoint(t *testing.T, name, key string) scenario.Point {
	t.Helper()
	sc, err := scenario.Builtin(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range sc.Points(scenario.Quick) {
		if pt.Key == key {
			return pt
		}
	}
	t.Fatalf("%s has no quick point %s", name, key)
	return scenario.Point{}
}
