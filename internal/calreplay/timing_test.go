package calreplay

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// httpPoint is one load of TestTimingHTTPPath.
type httpPoint struct {
	name string
	args []string // vllm-sim's arguments beyond the GPU and model
	w    calibration.SimWorkload
	// sized: the requests are cut to one per stream, then the output
	// length (to no fewer than minPointTokens), until the simulated time
	// takes at most pointBudget, so that a slow preset's point costs about
	// as much real time as a fast one's.
	sized bool
}

// A sized point's real-time budget and its shortest output.
const (
	pointBudget    = time.Second
	minPointTokens = 16
)

// The loads every GPU preset serves Qwen3-0.6B at: one chat stream, and
// 64 completion streams (the front end's chat cost would cap the small
// model's throughput well below the GPU's; docs/simulator.md), each short
// enough for a second or two of real time.
var httpPoints = []httpPoint{
	{name: "chat-c1", w: calibration.SimWorkload{InputTokens: 256, OutputTokens: 64, LengthsFrom: calibration.LengthsFixed, IgnoreEOS: true,
		Concurrency: 1, RequestRate: math.Inf(1), NumPrompts: 3, Endpoint: calibration.EndpointChat}, sized: true},
	{name: "completions-c64", w: calibration.SimWorkload{InputTokens: 256, OutputTokens: 64, LengthsFrom: calibration.LengthsFixed, IgnoreEOS: true,
		Concurrency: 64, RequestRate: math.Inf(1), NumPrompts: 128, Endpoint: calibration.EndpointCompletions}, sized: true},
}

// The issue's load (vllmperf run --concurrency 64 --prompt-tokens 256
// --max-tokens 128 on h100 Qwen3-0.6B), with 64 and 16 sequences a step.
var (
	issueLoad = calibration.SimWorkload{InputTokens: 256, OutputTokens: 128, LengthsFrom: calibration.LengthsFixed, IgnoreEOS: true,
		Concurrency: 64, RequestRate: math.Inf(1), NumPrompts: 128, Endpoint: calibration.EndpointCompletions}
	issueSeqs64 = httpPoint{name: "issue-38-max-num-seqs-64", args: []string{"--max-num-seqs", "64"}, w: issueLoad}
	issueSeqs16 = httpPoint{name: "issue-38-max-num-seqs-16", args: []string{"--max-num-seqs", "16"}, w: issueLoad}
)

// pointResult is a point's two paths and how the host kept up.
type pointResult struct {
	tokens, http Result
	host         HostPace
}

// runPoint runs a point in simulated time and through the HTTP API of an
// in-process vllm-sim in real time, without noise.
func runPoint(t *testing.T, gpu string, pt httpPoint) pointResult {
	t.Helper()
	const model = "Qwen/Qwen3-0.6B"
	args := slices.Concat([]string{"--model", model, "--sim-gpu", gpu, "--sim-jitter", "0", "--sim-cold-start", "0", "--sim-seed", "1"}, pt.args)
	o, err := config.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	var r pointResult
	for w := pt.w; ; {
		in := calibration.SimInputs{GPU: gpu, Model: model, Args: args, Workload: w}
		r = pointResult{tokens: Result{Inputs: in, NumPrompts: w.NumPrompts}, http: Result{Inputs: in, NumPrompts: w.NumPrompts}}
		if err := simulate(o.Config, &r.tokens, 1); err != nil {
			t.Fatalf("simulated time: %v", err)
		}
		switch {
		case !pt.sized || r.tokens.Duration <= pointBudget:
		case w.NumPrompts > w.Concurrency:
			w.NumPrompts = w.Concurrency
			continue
		case w.OutputTokens > minPointTokens:
			w.OutputTokens = max(minPointTokens, int(float64(w.OutputTokens)*float64(pointBudget)/float64(r.tokens.Duration)))
			continue
		}
		break
	}
	ctx, cancel := context.WithTimeout(context.Background(), httpRowTimeout)
	defer cancel()
	if _, r.host, err = sendHTTP(ctx, o, &r.http, 1); err != nil {
		t.Fatalf("HTTP path: %v", err)
	}
	return r
}

// misses lists how the HTTP path's throughput and TPOT stray from
// simulated time: below HTTPFloor (slower: the model's loss, unless the
// host fell behind), or faster beyond RateTolerance (a cost skipped,
// whatever the host).
func (r pointResult) misses() (slower, faster []string) {
	check := func(what string, speed float64) {
		switch {
		case speed < HTTPFloor:
			slower = append(slower, fmt.Sprintf("%s %.2f× simulated time's, want ≥ %.2f×", what, speed, HTTPFloor))
		case speed > 1+RateTolerance:
			faster = append(faster, fmt.Sprintf("%s %.2f× simulated time's, faster than the model beyond %.0f%%", what, speed, 100*RateTolerance))
		}
	}
	check("output throughput", r.http.OutputThroughput/r.tokens.OutputThroughput)
	check("TPOT (as a speed)", float64(r.tokens.TPOT.Mean)/float64(r.http.TPOT.Mean))
	return slower, faster
}

func (r pointResult) String() string {
	w := r.tokens.Inputs.Workload
	return fmt.Sprintf("%d→%d ×%d at concurrency %d: output %.0f tok/s over HTTP vs %.0f in simulated time (%.2f×), mean TPOT %v vs %v, mean TTFT %v vs %v; %v",
		w.InputTokens, w.OutputTokens, w.NumPrompts, w.Concurrency, r.http.OutputThroughput, r.tokens.OutputThroughput, r.http.OutputThroughput/r.tokens.OutputThroughput,
		r.http.TPOT.Mean, r.tokens.TPOT.Mean, r.http.TTFT.Mean, r.tokens.TTFT.Mean, r.host)
}

// judge runs pt (twice when the first run misses, so that a moment's
// stall does not decide) and fails on the model's misses: the HTTP path
// faster than simulated time beyond tolerance, or slower than HTTPFloor of
// it while the host kept real time. A run the host slowed beyond
// engine.BehindThreshold is reported by name and skipped, not counted as
// the model's. It returns the last run.
func judge(t *testing.T, gpu string, pt httpPoint) pointResult {
	t.Helper()
	var r pointResult
	for try := 1; try <= 2; try++ {
		r = runPoint(t, gpu, pt)
		t.Logf("try %d: %v", try, r)
		slower, faster := r.misses()
		if len(faster) > 0 {
			t.Fatalf("%s %s: %v: %v", gpu, pt.name, faster, r)
		}
		if len(slower) == 0 {
			return r
		}
		if try == 2 {
			if r.host.Behind() {
				t.Skipf("%s %s: %v, not counted as the model's: %v", gpu, pt.name, slower, r.host)
			}
			t.Fatalf("%s %s: %v while the host kept real time: %v", gpu, pt.name, slower, r)
		}
	}
	return r
}

// TestTimingHTTPPath: for every GPU preset, Qwen3-0.6B's figures over the
// HTTP API in real time stay within HTTPFloor of the replay of the same
// workload in simulated time (throughput and TPOT), at one chat stream and
// at 64 completion streams, among them the issue's h100 load (64 streams,
// 256 in, 128 out), where 64 sequences a step also serve at least 1.5× the
// output of 16 over HTTP. A run the host could not keep in real time
// (HostPace: the engine's lost time, this process's stalls) is reported by
// name, not counted as the model's.
func TestTimingHTTPPath(t *testing.T) {
	testphase.Timed(t)
	for _, gpu := range presets.GPUPresetNames() {
		for _, pt := range httpPoints {
			t.Run(gpu+"/"+pt.name, func(t *testing.T) { judge(t, gpu, pt) })
		}
	}
	var at64, at16 pointResult
	ok64 := t.Run("h100/"+issueSeqs64.name, func(t *testing.T) { at64 = judge(t, "h100", issueSeqs64) })
	ok16 := t.Run("h100/"+issueSeqs16.name, func(t *testing.T) { at16 = judge(t, "h100", issueSeqs16) })
	if !ok64 || !ok16 || at64.host.Wall == 0 || at16.host.Wall == 0 {
		return // failed or skipped above, by name
	}
	ratio := at64.http.OutputThroughput / at16.http.OutputThroughput
	t.Logf("h100 Qwen3-0.6B, 64 streams, 256→128 over HTTP: max-num-seqs 64 %.0f tok/s, 16 %.0f tok/s: %.2f× (simulated time %.2f×)",
		at64.http.OutputThroughput, at16.http.OutputThroughput, ratio, at64.tokens.OutputThroughput/at16.tokens.OutputThroughput)
	if ratio < 1.5 {
		t.Errorf("h100 max-num-seqs 64 vs 16 over HTTP: %.2f×, want ≥ 1.5×", ratio)
	}
}
