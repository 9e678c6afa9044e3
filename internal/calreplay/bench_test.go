package calreplay

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHTTPPath measures the real-time path's cost and ceiling: the
// issue's load (h100 Qwen3-0.6B, 64 completion streams, 256 in, 128 out)
// through the HTTP API of an in-process vllm-sim and the suite's client,
// at the timing model's speed and 2, 4 and 8 times faster
// (--sim-slowdown). It reports the output tok/s served, the CPU the
// process (server and client) spent per token (one token per SSE event
// here), the tok/s one core would serve at that cost, and the share of
// the run the engine lost to the host (engine.MetricLostSeconds): where
// that passes 5%, the model's rate is beyond what the host serves.
//
//	go test -run '^$' -bench BenchmarkHTTPPath -benchtime 1x ./internal/calreplay/
func BenchmarkHTTPPath(b *testing.B) {
	for _, speed := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("speed-%dx", speed), func(b *testing.B) {
			args := []string{"--model", "Qwen/Qwen3-0.6B", "--sim-gpu", "h100", "--max-num-seqs", "64", "--sim-jitter", "0", "--sim-cold-start", "0",
				"--sim-slowdown", fmt.Sprint(1 / float64(speed))}
			o, err := config.ParseArgs(args)
			if err != nil {
				b.Fatal(err)
			}
			var tokS, cpuPerTok, lostShare float64
			for i := 0; i < b.N; i++ {
				w := issueLoad
				in := calibration.SimInputs{GPU: "h100", Model: "Qwen/Qwen3-0.6B", Args: args, Workload: w}
				res := Result{Inputs: in, NumPrompts: w.NumPrompts}
				ctx, cancel := context.WithTimeout(context.Background(), httpRowTimeout)
				cpu0 := cpuTime(b)
				_, host, err := sendHTTP(ctx, o, &res, 1)
				cpu := cpuTime(b) - cpu0
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				tokens := float64(w.NumPrompts * w.OutputTokens)
				tokS += res.OutputThroughput
				cpuPerTok += float64(cpu.Microseconds()) / tokens
				lostShare += float64(host.Lost) / float64(host.Wall)
			}
			n := float64(b.N)
			b.ReportMetric(tokS/n, "tok/s")
			b.ReportMetric(cpuPerTok/n, "cpu-µs/tok")
			b.ReportMetric(1e6/(cpuPerTok/n), "tok/s/core")
			b.ReportMetric(100*lostShare/n, "%lost")
		})
	}
}
