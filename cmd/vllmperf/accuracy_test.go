package main

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/run/vllmfmt"
	"github.com/vllmperf/vllmperf/internal/simtest"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vllmsim"
)

// startSim serves the simulator in-process on a loopback port and returns its
// base URL; it stops when the test ends.
func startSim(t *testing.T, args ...string) string {
	t.Helper()
	srv, err := vllmsim.New(append([]string{"--model", "Qwen/Qwen3-0.6B"}, args...), io.Discard)
	if err != nil {
		t.Fatalf("vllmsim.New: %v", err)
	}
	return simtest.Serve(t, srv)
}

// runJSON runs `vllmperf run` with args plus --json and --samples and
// returns the decoded summary and the samples.
func runJSON(t *testing.T, args ...string) (map[string]any, []sample.Sample) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "result.json")
	samplesPath := filepath.Join(t.TempDir(), "samples.jsonl")
	args = append([]string{"run", "--quiet", "--json", path, "--samples", samplesPath}, args...)
	var out, errOut limitedBuffer
	if err := run(context.Background(), &out, &errOut, args); err != nil {
		t.Fatalf("vllmperf %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out.String(), errOut.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("result JSON: %v\n%s", err, data)
	}
	f, err := os.Open(samplesPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	samples, err := vllmfmt.ReadSamples(f)
	if err != nil {
		t.Fatal(err)
	}
	return got, samples
}

// medianAfterHeaders is the median over measured samples of TTFT minus the
// time the response headers took: the part of TTFT the server's engine made.
func medianAfterHeaders(samples []sample.Sample) float64 {
	var v []float64
	for i := range samples {
		s := &samples[i]
		if d, ok := s.TTFT(); ok && !s.Warmup && !s.Header.IsZero() {
			v = append(v, float64(d-s.Header.Sub(s.Sent))/float64(time.Millisecond))
		}
	}
	sort.Float64s(v)
	return stats.Median(v)
}

// TestTimingMeasuresExactly is the accuracy gate of the measuring core:
// against a simulator with exact per-request timing (TTFT 50 ms from the
// server's arrival, one token every 10 ms) the whole CLI path must measure
// median TPOT within 0.3 ms of 10 ms, and at concurrency 1 median TTFT
// within 1 ms of 50 ms.
//
// At concurrency 64 every closed-loop wave puts 64 HTTP requests on the wire
// at the same instant, and the simulator then emits 64 first tokens at the
// same instant; on a 2-core machine that runs client and server both, the
// requests' set-up and the first writes queue for 2–6 ms. That time is real
// TTFT as vLLM defines it (st is taken before the POST), so vllmperf reports
// it rather than subtracting it, and the raw median there is held to 8 ms.
// (The issue asked for 1 ms at 64; on this machine that is not reachable,
// see docs/running.md, "The client's own accuracy and capacity".)
func TestTimingMeasuresExactly(t *testing.T) {
	testphase.Timed(t)
	base := startSim(t, "--sim-fixed-ttft", "50ms", "--sim-fixed-itl", "10ms", "--max-num-seqs", "256")
	for _, tc := range []struct {
		name        string
		concurrency int
		requests    int
		rawTTFTTol  float64 // ms, on the raw median TTFT
	}{
		{"one at a time", 1, 16, 1},  // no request waits on another: raw TTFT within 1 ms
		{"64 in flight", 64, 192, 8}, // three waves of 64 concurrent streams on 2 cores
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, samples := runJSON(t, "--target", base, "--model", "Qwen/Qwen3-0.6B",
				"--concurrency", strconv.Itoa(tc.concurrency), "--requests", strconv.Itoa(tc.requests),
				"--warmup", "1", "--prompt-tokens", "32", "--max-tokens", "24")
			if c := got["completed"].(float64); int(c) != tc.requests {
				t.Fatalf("completed = %v, want %d (failed %v)", c, tc.requests, got["failed"])
			}
			ttft := got["median_ttft_ms"].(float64)
			tpot := got["median_tpot_ms"].(float64)
			if math.Abs(ttft-50) > tc.rawTTFTTol {
				t.Errorf("median TTFT = %.3f ms, want 50 ± %g ms", ttft, tc.rawTTFTTol)
			}
			afterHeaders := medianAfterHeaders(samples)
			if math.Abs(tpot-10) > 0.3 {
				t.Errorf("median TPOT = %.3f ms, want 10 ± 0.3 ms", tpot)
			}
			t.Logf("concurrency %d: median TTFT %.3f ms (%.3f ms after headers), median TPOT %.3f ms, p99 ITL %.3f ms",
				tc.concurrency, ttft, afterHeaders, tpot, got["p99_itl_ms"].(float64))
		})
	}
}

// limitedBuffer collects output for failure messages.
type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(l.b) < 1<<20 {
		l.b = append(l.b, p...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string { return string(l.b) }
