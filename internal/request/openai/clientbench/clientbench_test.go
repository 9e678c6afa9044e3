package clientbench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/simtest"
	"github.com/vllmperf/vllmperf/internal/vllmsim"
)

// TestMain serves the simulator instead of running tests when the
// benchmarks start this binary as a child (startSimChild), so that the
// server's CPU and memory stay out of the client's figures.
func TestMain(m *testing.M) {
	if role, args := simtest.Role(); role == simtest.RoleSim {
		os.Exit(simtest.ServeChild(args, func(args []string) (simtest.Server, error) { return vllmsim.New(args, io.Discard) }))
	}
	os.Exit(m.Run())
}

// startSimChild starts the simulator in a child process and returns its base URL.
func startSimChild(b *testing.B, args ...string) string {
	b.Helper()
	return simtest.StartChild(b, simtest.RoleSim, args...).First
}

// cpuTime is this process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkClientTokensPerCore streams from a simulator that emits a token
// every millisecond per stream on 64 concurrent streams (an offered load of
// about 64,000 tokens/s, one token per chunk) and reports how many streamed
// tokens the client handles per second of its own CPU time: tokens/s on one
// core. The simulator runs in a child process, so its CPU is not counted.
// Target: ≥ 50,000 tokens/s per core.
func BenchmarkClientTokensPerCore(b *testing.B) {
	const (
		streams   = 64
		maxTokens = 512
	)
	base := startSimChild(b, "--model", "Qwen/Qwen3-0.6B", "--max-num-seqs", "1024",
		"--sim-fixed-ttft", "1ms", "--sim-fixed-itl", "1ms", "--sim-cold-start", "0")
	c := openai.New(base, openai.WithMaxConnections(streams))
	defer c.CloseIdleConnections()
	req := openai.Request{Endpoint: openai.Completions, Model: "Qwen/Qwen3-0.6B", Prompt: "count to a thousand", MaxTokens: maxTokens, IgnoreEOS: true}
	samples := make([]sample.Sample, streams)

	var tokens, chunks int
	var cpu, wall time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cpu0, wall0 := cpuTime(), time.Now()
		var wg sync.WaitGroup
		for j := range samples {
			wg.Go(func() { c.Send(context.Background(), req, &samples[j]) })
		}
		wg.Wait()
		cpu += cpuTime() - cpu0
		wall += time.Since(wall0)
		for j := range samples {
			s := &samples[j]
			if s.Err != nil || s.CompletionTokens != maxTokens {
				b.Fatalf("stream %d: err %v, %d tokens, want %d", j, s.Err, s.CompletionTokens, maxTokens)
			}
			tokens += s.CompletionTokens
			chunks += len(s.Chunks)
		}
	}
	b.ReportMetric(float64(tokens)/cpu.Seconds(), "tokens/cpu-s")
	b.ReportMetric(float64(tokens)/wall.Seconds(), "tokens/s")
	b.ReportMetric(float64(tokens)/float64(chunks), "tokens/chunk")
}

// BenchmarkClientMemoryPerStream holds 1,000 streams open against the
// simulator (a token every 100 ms each) and reports the client's heap and
// goroutine-stack growth per in-flight stream. Target: ≤ 64 KiB per stream.
func BenchmarkClientMemoryPerStream(b *testing.B) {
	const (
		streams   = 1000
		maxTokens = 256
	)
	base := startSimChild(b, "--model", "Qwen/Qwen3-0.6B", "--max-num-seqs", "2048",
		"--max-num-batched-tokens", "65536", "--sim-fixed-ttft", "5ms", "--sim-fixed-itl", "100ms", "--sim-cold-start", "0")
	c := openai.New(base, openai.WithMaxConnections(streams))
	defer c.CloseIdleConnections()
	req := openai.Request{Endpoint: openai.Completions, Model: "Qwen/Qwen3-0.6B", Prompt: "hold the line", MaxTokens: maxTokens, IgnoreEOS: true}

	var perStream float64
	for i := 0; i < b.N; i++ {
		samples := make([]sample.Sample, streams) // the caller's records: not the client's cost
		ctx, cancel := context.WithCancel(context.Background())
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)

		var wg sync.WaitGroup
		for j := range samples {
			wg.Go(func() { c.Send(ctx, req, &samples[j]) })
		}
		if err := waitRunning(base, streams, 30*time.Second); err != nil {
			cancel()
			wg.Wait()
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		cancel()
		wg.Wait()
		grown := float64((after.HeapInuse + after.StackInuse) - (before.HeapInuse + before.StackInuse))
		perStream += grown / streams / 1024
		c.CloseIdleConnections()
	}
	b.ReportMetric(perStream/float64(b.N), "KiB/stream")
}

// waitRunning polls the simulator's /metrics until n requests are running
// and each has had time to receive its first token.
func waitRunning(base string, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		running, generated, err := scrapeRunning(base)
		if err == nil && running >= float64(n) && generated >= float64(n) {
			return nil
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not a timing assumption
	}
	return fmt.Errorf("%d streams not all running within %v", n, limit)
}

func scrapeRunning(base string) (running, generated float64, err error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	sum := func(name string) float64 {
		var v float64
		if f, ok := fams[name]; ok {
			for _, m := range f.GetMetric() {
				if g := m.GetGauge(); g != nil {
					v += g.GetValue()
				}
				if c := m.GetCounter(); c != nil {
					v += c.GetValue()
				}
			}
		}
		return v
	}
	return sum("vllm:num_requests_running"), sum("vllm:generation_tokens_total"), nil
}
