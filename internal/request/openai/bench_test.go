package openai

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/simtest"
)

// encodeStream pre-encodes a vLLM chat stream of n one-token chunks with
// continuous usage, as the engine sends it.
func encodeStream(n int) []byte {
	var b strings.Builder
	b.WriteString(roleEvent)
	for i := 1; i <= n; i++ {
		b.WriteString(chatEvent(" tok", i))
	}
	b.WriteString(strings.Replace(finishEvent, `"completion_tokens":2`, fmt.Sprintf(`"completion_tokens":%d`, n), 1))
	b.WriteString(strings.Replace(usageEvent, `"completion_tokens":2`, fmt.Sprintf(`"completion_tokens":%d`, n), 1))
	b.WriteString(doneEvent)
	return []byte(b.String())
}

// BenchmarkSendStream measures the client's cost per streamed token: the
// server writes a pre-encoded 256-token stream in one go, with no delay.
// Server and client share the process, so tokens/s is a lower bound on what
// the client alone sustains; run with -cpu 1 for a per-core figure.
func BenchmarkSendStream(b *testing.B) {
	const tokens = 256
	body := encodeStream(tokens)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c := New(srv.URL)
	defer c.CloseIdleConnections()
	req := Request{Model: "m", Prompt: "Tell me a story.", MaxTokens: tokens, IgnoreEOS: true}
	ctx := context.Background()
	var s sample.Sample
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		c.Send(ctx, req, &s)
		if s.Err != nil || s.CompletionTokens != tokens || len(s.Chunks) != tokens {
			b.Fatalf("bad sample: err %v, n %d, chunks %d", s.Err, s.CompletionTokens, len(s.Chunks))
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N*tokens)/elapsed.Seconds(), "tokens/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*tokens), "ns/token")
}

// BenchmarkStreamMemory measures the client's memory per in-flight stream
// with 1,000 streams open at once. The server runs in a child process (this
// test binary, see runHoldServer) so that only the client's heap and stacks
// are counted: each stream has received its headers, the role chunk and one
// content chunk, and is blocked waiting for more.
func BenchmarkStreamMemory(b *testing.B) {
	for _, maxTokens := range []int{256, 1024} {
		b.Run(fmt.Sprintf("streams=1000/max_tokens=%d", maxTokens), func(b *testing.B) {
			benchStreamMemory(b, 1000, maxTokens)
		})
	}
}

func benchStreamMemory(b *testing.B, streams, maxTokens int) {
	srv := startHoldServer(b, roleHoldServer)
	c := New("http://"+srv.addr, WithMaxConnections(streams), WithIdleTimeout(time.Minute))
	defer c.CloseIdleConnections()
	req := Request{Model: "m", Prompt: "hold", MaxTokens: maxTokens}
	var heap, stack, goroutines float64
	for i := 0; i < b.N; i++ {
		samples := make([]sample.Sample, streams) // the caller's memory, not counted
		ctx, cancel := context.WithCancel(context.Background())
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()

		var wg sync.WaitGroup
		for j := range samples {
			wg.Go(func() { c.Send(ctx, req, &samples[j]) })
		}
		if err := srv.waitHeld(streams, 30*time.Second); err != nil {
			cancel()
			wg.Wait()
			b.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond) // let every client read its chunk
		runtime.GC()
		runtime.ReadMemStats(&after)
		g1 := runtime.NumGoroutine()
		cancel()
		wg.Wait()
		for j := range samples {
			if s := &samples[j]; s.Err == nil || s.Err.Kind != sample.ErrCanceled || len(s.Chunks) != 1 {
				b.Fatalf("stream %d was not in flight with one chunk: err %v, chunks %d", j, s.Err, len(s.Chunks))
			}
		}
		heap = float64(int64(after.HeapInuse)-int64(before.HeapInuse)) / float64(streams)
		stack = float64(int64(after.StackInuse)-int64(before.StackInuse)) / float64(streams)
		goroutines = float64(g1-g0) / float64(streams)
	}
	b.ReportMetric((heap+stack)/1024, "KiB/stream")
	b.ReportMetric(heap/1024, "heap-KiB/stream")
	b.ReportMetric(stack/1024, "stack-KiB/stream")
	b.ReportMetric(goroutines, "goroutines/stream")
}

// holdServer is the child process serving held streams.
type holdServer struct {
	addr  string
	lines *bufio.Scanner
}

// startHoldServer starts this test binary as a child server in role with
// args; it exits when its stdin closes, so it cannot outlive the benchmark.
func startHoldServer(b *testing.B, role string, args ...string) *holdServer {
	b.Helper()
	c := simtest.StartChild(b, role, args...)
	addr, ok := strings.CutPrefix(c.First, "ADDR ")
	if !ok {
		b.Fatalf("hold server did not report its address: %q", c.First)
	}
	return &holdServer{addr: addr, lines: c.Lines}
}

// waitHeld waits until the server reports n more held streams.
func (h *holdServer) waitHeld(n int, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() {
		for i := 0; i < n; i++ {
			if !h.lines.Scan() {
				done <- fmt.Errorf("hold server stopped after %d of %d streams: %v", i, n, h.lines.Err())
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("only some of %d streams were held after %v", n, timeout)
	}
}

// runHoldServer is the child-process side of BenchmarkStreamMemory: it
// serves loopback streams that send headers, the role chunk and one content
// chunk, print HELD, and then wait until the client goes away.
func runHoldServer() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hold server:", err)
		return 1
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "ADDR %s\n", ln.Addr())
	_ = out.Flush()
	go func() {
		<-simtest.ParentGone()
		os.Exit(0)
	}()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeSSE(w)
		_, _ = fmt.Fprint(w, roleEvent, chatEvent("a", 1))
		w.(http.Flusher).Flush()
		mu.Lock()
		_, _ = out.WriteString("HELD\n")
		_ = out.Flush()
		mu.Unlock()
		<-r.Context().Done()
	})}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "hold server:", err)
		return 1
	}
	return 0
}

// BenchmarkOversizedEventMemory measures the client's peak memory while 64
// streams each send an endless SSE line (the 50 MB line): with the
// default cap every stream fails at 4 MiB ("SSE event exceeds 4 MiB"), so
// the peak is bounded by streams × cap, not by what the server sends. The
// server runs in a child process so that only the client's memory counts.
// The cap=off case shows what the cap prevents (with fewer streams: its
// peak grows with the line). Run each case alone, so that maxrss-MiB (the
// process's high-water mark) is its own, for example
//
//	go test -run '^$' -bench 'OversizedEventMemory/cap=4MiB' -benchtime 1x -count 5 ./internal/request/openai/
func BenchmarkOversizedEventMemory(b *testing.B) {
	const line = 50_000_000
	for _, bc := range []struct {
		name    string
		streams int
		cap     int
	}{
		{"cap=4MiB/streams=64/line=50MB", 64, DefaultMaxEventSize},
		{"cap=off/streams=6/line=50MB", 6, 0},
	} {
		b.Run(bc.name, func(b *testing.B) {
			benchOversized(b, bc.streams, bc.cap, line)
		})
	}
}

func benchOversized(b *testing.B, streams, limit, line int) {
	srv := startHoldServer(b, roleOversizedServer, strconv.Itoa(line))
	c := New("http://"+srv.addr, WithMaxConnections(streams), WithMaxEventSize(limit))
	defer c.CloseIdleConnections()
	req := Request{Model: "m", Prompt: "oversized"}
	var peak, alloc float64
	for i := 0; i < b.N; i++ {
		samples := make([]sample.Sample, streams)
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := make(chan struct{})
		peakInuse := make(chan uint64)
		go samplePeakHeap(stop, peakInuse)

		var wg sync.WaitGroup
		for j := range samples {
			wg.Go(func() { c.Send(context.Background(), req, &samples[j]) })
		}
		wg.Wait()
		close(stop)
		top := <-peakInuse
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		for j := range samples {
			if s := &samples[j]; s.Err == nil || s.Err.Kind != sample.ErrProtocol {
				b.Fatalf("stream %d: err %v, want a protocol error", j, s.Err)
			}
		}
		peak = float64(int64(top)-int64(before.HeapInuse)) / (1 << 20)
		alloc = float64(after.TotalAlloc-before.TotalAlloc) / (1 << 20)
	}
	b.ReportMetric(peak, "peak-heap-MiB")
	b.ReportMetric(peak/float64(streams), "peak-heap-MiB/stream")
	b.ReportMetric(alloc, "alloc-MiB")
	// The process's high-water mark: meaningful when this case runs alone
	// (-bench with its full name), as earlier benchmarks raise it too.
	if rss := maxRSS(); rss > 0 {
		b.ReportMetric(float64(rss)/(1<<20), "maxrss-MiB")
	}
}

// samplePeakHeap reads HeapInuse every millisecond until stop closes, then
// sends the highest reading.
func samplePeakHeap(stop <-chan struct{}, out chan<- uint64) {
	var ms runtime.MemStats
	var top uint64
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		runtime.ReadMemStats(&ms)
		top = max(top, ms.HeapInuse)
		select {
		case <-stop:
			out <- top
			return
		case <-t.C:
		}
	}
}

// runOversizedServer is the child-process side of
// BenchmarkOversizedEventMemory: every stream sends the role chunk and then
// one data line of size bytes (given as text) without a line end, in 64 KiB
// writes, stopping early when the client goes away.
func runOversizedServer(size string) int {
	var n int
	if _, err := fmt.Sscan(size, &n); err != nil || n <= 0 {
		fmt.Fprintf(os.Stderr, "oversized server: bad size %q\n", size)
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "oversized server:", err)
		return 1
	}
	fmt.Printf("ADDR %s\n", ln.Addr())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin) // parent gone or done
		os.Exit(0)
	}()
	block := []byte(strings.Repeat("x", 64<<10))
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeSSE(w)
		_, _ = fmt.Fprint(w, roleEvent, "data: ")
		for sent := 0; sent < n; sent += len(block) {
			if _, err := w.Write(block[:min(len(block), n-sent)]); err != nil {
				return
			}
		}
	})}
	if err := srv.Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "oversized server:", err)
		return 1
	}
	return 0
}
