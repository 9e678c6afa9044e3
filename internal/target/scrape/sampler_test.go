package scrape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim"
)

// scriptedSource returns synthetic snapshots 2 s apart; exposition(k) gives
// the text of scrape k, or an error. It signals reached once scrape n is
// served.
type scriptedSource struct {
	exposition func(k int) (string, error)
	n          int
	reached    chan struct{}

	mu    sync.Mutex
	calls int
}

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func (s *scriptedSource) Scrape(ctx context.Context) (*Snapshot, error) {
	s.mu.Lock()
	k := s.calls
	s.calls++
	s.mu.Unlock()
	if k == s.n {
		close(s.reached)
	}
	text, err := s.exposition(k)
	if err != nil {
		return nil, err
	}
	return Parse(strings.NewReader(text), "scripted", at(k))
}

// at is the synthetic time of scrape k.
func at(k int) time.Time { return t0.Add(time.Duration(k) * 2 * time.Second) }

// generated is the generation_tokens_total of scrape k: windows alternate
// between 150 and 50 tokens.
func generated(k int) float64 { return float64(100*k + 50*(k%2)) }

func steadyExposition(k int) (string, error) {
	return fmt.Sprintf(`vllm:num_requests_running{engine="0"} %d
vllm:num_requests_waiting{engine="0"} %d
vllm:kv_cache_usage_perc{engine="0"} %g
vllm:generation_tokens_total{engine="0"} %g
vllm:prompt_tokens_total{engine="0"} %d
vllm:num_preemptions_total{engine="0"} %d
`, k, 100-k, float64(k)/1000, generated(k), 1000*k, k/3), nil
}

// runScripted samples src until it reached its n-th scrape, then stops.
func runScripted(t *testing.T, src *scriptedSource) *TimeSeries {
	t.Helper()
	src.reached = make(chan struct{})
	s := NewSampler(src, WithInterval(time.Millisecond))
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-src.reached
	return s.Stop()
}

func TestSamplerRecordsWindows(t *testing.T) {
	t.Parallel()
	ts := runScripted(t, &scriptedSource{exposition: steadyExposition, n: 6})
	if len(ts.Points) < 7 || len(ts.Errors) != 0 || len(ts.Resets) != 0 {
		t.Fatalf("%d points, errors %v, resets %v; want at least 7 points and nothing else", len(ts.Points), ts.Errors, ts.Resets)
	}
	for k, p := range ts.Points {
		want := Point{At: at(k), Running: float64(k), Waiting: float64(100 - k), KVUsage: float64(k) / 1000}
		if k > 0 {
			want.Window = 2 * time.Second
			want.GenerationTokensPerSec = (generated(k) - generated(k-1)) / 2
			want.PromptTokensPerSec = 1000.0 / 2
			want.Preemptions = float64(k/3 - (k-1)/3)
		}
		if !equalPoint(p, want) {
			t.Errorf("point %d = %+v\nwant %+v", k, p, want)
		}
	}
	last := float64(len(ts.Points) - 1)
	for _, tc := range []struct {
		name string
		get  func() (float64, error)
		want float64
	}{
		{"peak running", ts.PeakRunning, last},
		{"peak waiting", ts.PeakWaiting, 100},
		{"peak KV", ts.PeakKVUsage, last / 1000},
		{"preemptions", ts.Preemptions, math.Floor(last / 3)},
	} {
		if got, err := tc.get(); err != nil || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s = %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := ts.Jitter(); err != nil {
		t.Errorf("Jitter: %v", err)
	}
}

func equalPoint(a, b Point) bool {
	return a.At.Equal(b.At) && a.Window == b.Window && a.Running == b.Running && a.Waiting == b.Waiting &&
		math.Abs(a.KVUsage-b.KVUsage) < 1e-12 && a.GenerationTokensPerSec == b.GenerationTokensPerSec &&
		a.PromptTokensPerSec == b.PromptTokensPerSec && a.Preemptions == b.Preemptions && slices.Equal(a.Missing, b.Missing)
}

func TestSamplerKeepsErrorsAndResets(t *testing.T) {
	t.Parallel()
	src := &scriptedSource{n: 5, exposition: func(k int) (string, error) {
		switch k {
		case 2:
			return "", &FetchError{URL: "scripted", Status: 503}
		case 3:
			// a restart: counters back near zero; no KV gauge in this scrape
			return "vllm:generation_tokens_total 7\nvllm:prompt_tokens_total 1\nvllm:num_preemptions_total 0\nvllm:num_requests_running 0\nvllm:num_requests_waiting 0\n", nil
		case 4:
			return "vllm:generation_tokens_total 27\nvllm:prompt_tokens_total 1\nvllm:num_preemptions_total 0\nvllm:num_requests_running 0\nvllm:num_requests_waiting 0\nvllm:kv_cache_usage_perc 0\n", nil
		}
		return steadyExposition(k)
	}}
	ts := runScripted(t, src)
	if len(ts.Errors) != 1 || !strings.Contains(ts.Errors[0].Error(), "HTTP 503") {
		t.Errorf("errors = %v, want the one 503", ts.Errors)
	}
	if len(ts.Resets) == 0 || ts.Resets[0].Metric != "vllm:generation_tokens_total" {
		t.Errorf("resets = %v, want generation_tokens_total's", ts.Resets)
	}
	p := ts.Points[2] // scrape 3: after the failed scrape 2 and across the restart
	if p.Window != 4*time.Second || !slices.Contains(p.Missing, GenerationTokensTotal) || !slices.Contains(p.Missing, KVCacheUsagePerc) {
		t.Errorf("point after the gap = %+v; want a 4s window with no rates and no KV usage", p)
	}
	if p := ts.Points[3]; p.GenerationTokensPerSec != 10 || len(p.Missing) != 0 {
		t.Errorf("point after the restart = %+v; want 20 tokens / 2 s = 10 tok/s", p)
	}
}

func TestSamplerLifecycle(t *testing.T) {
	t.Parallel()
	src := &scriptedSource{exposition: steadyExposition, n: 1, reached: make(chan struct{})}
	s := NewSampler(src)
	if got := s.Stop(); len(got.Points) != 0 || got.Interval != DefaultInterval {
		t.Errorf("Stop before Start = %+v, want an empty series at the default interval", got)
	}

	s = NewSampler(src, WithInterval(time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx); err == nil {
		t.Error("second Start succeeded, want an error")
	}
	<-src.reached
	cancel() // the caller's context ends: sampling stops, Stop takes no last scrape
	first := s.Stop()
	if s.Stop() != first {
		t.Error("second Stop returned another series")
	}
	src.mu.Lock()
	calls := src.calls
	src.mu.Unlock()
	if len(first.Points) > calls {
		t.Errorf("%d points from %d scrapes", len(first.Points), calls)
	}
}

func TestTimeSeriesFigures(t *testing.T) {
	t.Parallel()
	w := 2 * time.Second
	steady := &TimeSeries{Interval: w, Points: []Point{
		{Running: 1},
		{Window: w, GenerationTokensPerSec: 40, Running: 8, KVUsage: 0.5, Preemptions: 1},
		{Window: w, GenerationTokensPerSec: 60, Running: 8, Waiting: 3, KVUsage: 0.75},
		{Window: w, GenerationTokensPerSec: 40, Running: 4, KVUsage: 0.25, Preemptions: 2},
		{Window: w, GenerationTokensPerSec: 60, Running: 2},
		// the last, short window (Stop's scrape) is left out of the jitter
		{Window: w / 4, GenerationTokensPerSec: 1000},
	}}
	// rates 40, 60, 40, 60: mean 50, population std 10
	if got, err := steady.Jitter(); err != nil || math.Abs(got-0.2) > 1e-12 {
		t.Errorf("Jitter = %v, %v; want 0.2", got, err)
	}
	sum := steady.Summary()
	if *sum.PeakRunning != 8 || *sum.PeakWaiting != 3 || *sum.PeakKVUsage != 0.75 || *sum.Preemptions != 3 || sum.Unavailable != nil {
		t.Errorf("Summary = %+v", sum)
	}

	for _, tc := range []struct {
		name string
		ts   *TimeSeries
		want string
	}{
		// one full window only
		{"too short", &TimeSeries{Interval: w, Points: []Point{{}, {Window: w, GenerationTokensPerSec: 5}}}, "at least 2 full windows"},
		// no output at all
		{"idle", &TimeSeries{Interval: w, Points: []Point{{}, {Window: w}, {Window: w}}}, "no tokens generated"},
	} {
		if _, err := tc.ts.Jitter(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Jitter error = %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := (&TimeSeries{Interval: w, Points: []Point{{}, {Window: w}}}).Jitter(); !errors.Is(err, ErrTooFewWindows) {
		t.Errorf("Jitter error = %v, want ErrTooFewWindows", err)
	}

	failed := &TimeSeries{Source: "http://127.0.0.1:1/metrics", Interval: w, Errors: []error{errors.New("connection refused")}}
	_, err := failed.PeakKVUsage()
	if !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), "no scrape during the run succeeded") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("PeakKVUsage with only failed scrapes: %v", err)
	}
	noKV := &TimeSeries{Interval: w, Points: []Point{{Missing: []string{KVCacheUsagePerc}}}}
	if _, err := noKV.PeakKVUsage(); !errors.Is(err, ErrNotAvailable) || !strings.Contains(err.Error(), "vllm:kv_cache_usage_perc") {
		t.Errorf("PeakKVUsage without the gauge: %v", err)
	}

	b, err := json.Marshal(failed)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if errs, _ := got["errors"].([]any); len(errs) != 1 || errs[0] != "connection refused" {
		t.Errorf("JSON errors = %v, want the message", got["errors"])
	}
	if s, _ := got["summary"].(map[string]any); s == nil || s["peak_kv_cache_usage_perc"] != nil || s["unavailable"] == nil {
		t.Errorf("JSON summary = %v, want null figures and the reasons", got["summary"])
	}
}

// TestSamplerOnSimulator samples the in-process simulator while requests
// run: the series shows them running and tokens flowing.
func TestSamplerOnSimulator(t *testing.T) {
	t.Parallel()
	sim, err := vllmsim.New([]string{"Qwen/Qwen3-0.6B", "--sim-fixed-ttft", "50ms", "--sim-fixed-itl", "5ms", "--disable-log-stats"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = sim.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- sim.Serve(ctx, ln) }()
	client := &http.Client{Transport: &http.Transport{}}
	defer func() {
		client.CloseIdleConnections()
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + ln.Addr().String()

	sampler := NewSampler(NewScraper(base+"/metrics", WithHTTPClient(client)), WithInterval(20*time.Millisecond))
	if err := sampler.Start(ctx); err != nil {
		t.Fatal(err)
	}
	const requests, tokens = 4, 60
	var wg sync.WaitGroup
	for range requests {
		wg.Go(func() {
			resp, err := client.Post(base+"/v1/completions", "application/json",
				strings.NewReader(fmt.Sprintf(`{"prompt":"hello world","max_tokens":%d,"ignore_eos":true}`, tokens)))
			if err != nil {
				t.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	ts := sampler.Stop()

	if len(ts.Errors) != 0 || len(ts.Resets) != 0 {
		t.Fatalf("errors %v, resets %v", ts.Errors, ts.Resets)
	}
	if peak, err := ts.PeakRunning(); err != nil || peak < 1 || peak > requests {
		t.Errorf("peak running = %v, %v; want 1..%d", peak, err, requests)
	}
	var generatedTokens float64
	for _, p := range ts.Points {
		generatedTokens += p.GenerationTokensPerSec * p.Window.Seconds()
	}
	if math.Abs(generatedTokens-requests*tokens) > 1e-6 {
		t.Errorf("Σ window tok/s × window = %v tokens, want %d", generatedTokens, requests*tokens)
	}
	if last := ts.Points[len(ts.Points)-1]; last.Running != 0 {
		t.Errorf("last point running %v, want 0 after the requests finished", last.Running)
	}
}
