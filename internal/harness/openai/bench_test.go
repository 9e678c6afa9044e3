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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/harness/sample"
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
	srv := startHoldServer(b)
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

// startHoldServer starts this test binary as the hold server; it exits
// when its stdin closes, so it cannot outlive the benchmark.
func startHoldServer(b *testing.B) *holdServer {
	b.Helper()
	c := simtest.StartChild(b, roleHoldServer)
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
