package load

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeSender answers every request after latency(index), or records a
// cancellation when ctx ends first, and counts the requests it has in flight.
type fakeSender struct {
	latency func(i int) time.Duration

	inFlight, max atomic.Int64
	mu            sync.Mutex
	prompts       []string
}

func (f *fakeSender) Send(ctx context.Context, req openai.Request, s *sample.Sample) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.max.Load(); n > m && !f.max.CompareAndSwap(m, n); m = f.max.Load() {
	}
	f.mu.Lock()
	f.prompts = append(f.prompts, req.Prompt)
	f.mu.Unlock()
	s.Sent = time.Now()
	t := time.NewTimer(f.latency(s.Index))
	defer t.Stop()
	select {
	case <-t.C:
		s.Chunks = []sample.Chunk{{At: time.Since(s.Sent)}}
		s.CompletionTokens = 1
	case <-ctx.Done():
		s.Fail(sample.ErrCanceled, 0, ctx.Err().Error())
	}
	s.Done = time.Now()
}

func fixed(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }

func nextFunc(calls *[]int) func(int) openai.Request {
	return func(i int) openai.Request {
		*calls = append(*calls, i)
		return openai.Request{Model: "m", Prompt: fmt.Sprint("request ", i)}
	}
}

// checkDense checks that the samples are in index order with warm-up first.
func checkDense(t *testing.T, res *Result, warmup int) {
	t.Helper()
	for i, s := range res.Samples {
		if s.Index != i {
			t.Fatalf("Samples[%d].Index = %d", i, s.Index)
		}
		if got, want := s.Warmup, i < warmup; got != want {
			t.Fatalf("Samples[%d].Warmup = %v, want %v", i, got, want)
		}
		if s.Done.IsZero() {
			t.Fatalf("Samples[%d].Done is zero", i)
		}
	}
}

func TestValidate(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" means valid
	}{
		// The two minimal valid runs.
		{"closed loop", Config{Concurrency: 4, Requests: 10}, ""},
		{"open loop", Config{Rate: 5, Duration: time.Second}, ""},
		// Open loop at rate inf, capped, bounded by count.
		{"inf rate", Config{Rate: math.Inf(1), MaxConcurrency: 8, Requests: 100, Burstiness: 2}, ""},
		// Neither mode chosen.
		{"no mode", Config{Requests: 10}, "set Concurrency (closed loop) or Rate (open loop)"},
		// Both modes chosen.
		{"both modes", Config{Concurrency: 2, Rate: 3, Requests: 10}, "not both"},
		// Negative and NaN values.
		{"negative concurrency", Config{Concurrency: -1, Requests: 10}, "Concurrency = -1"},
		{"negative rate", Config{Rate: -2, Requests: 10}, "Rate = -2"},
		{"NaN rate", Config{Rate: math.NaN(), Requests: 10}, "Rate = NaN"},
		{"NaN burstiness", Config{Rate: 1, Burstiness: math.NaN(), Requests: 10}, "Burstiness = NaN"},
		{"negative burstiness", Config{Rate: 1, Burstiness: -1, Requests: 10}, "Burstiness = -1"},
		{"negative max concurrency", Config{Rate: 1, MaxConcurrency: -1, Requests: 10}, "MaxConcurrency = -1"},
		{"negative requests", Config{Concurrency: 1, Requests: -5}, "Requests = -5"},
		{"negative duration", Config{Concurrency: 1, Requests: 1, Duration: -time.Second}, "Duration = -1s"},
		{"negative grace", Config{Concurrency: 1, Requests: 1, Grace: -1}, "Grace = -1ns"},
		{"negative warmup", Config{Concurrency: 1, Requests: 1, Warmup: -1}, "Warmup = -1"},
		// No bound at all.
		{"unbounded", Config{Concurrency: 1}, "set Requests and/or Duration"},
		// Open-loop-only settings on a closed loop.
		{"burstiness closed", Config{Concurrency: 1, Requests: 1, Burstiness: 2}, "Burstiness = 2 with Concurrency"},
		{"cap closed", Config{Concurrency: 1, Requests: 1, MaxConcurrency: 4}, "MaxConcurrency = 4 with Concurrency"},
		// Rate inf bounded only by time would send without end.
		{"inf rate by duration", Config{Rate: math.Inf(1), Duration: time.Second}, "set Requests to bound how many"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestRunRejects(t *testing.T) {
	t.Parallel()
	send := &fakeSender{latency: fixed(0)}
	next := func(int) openai.Request { return openai.Request{} }
	if _, err := Run(context.Background(), Config{}, send, next); err == nil {
		t.Error("Run accepted an empty Config")
	}
	if _, err := Run(context.Background(), Config{Concurrency: 1, Requests: 1}, nil, next); err == nil || !strings.Contains(err.Error(), "sender is nil") {
		t.Errorf("nil sender: err = %v", err)
	}
	if _, err := Run(context.Background(), Config{Concurrency: 1, Requests: 1}, send, nil); err == nil || !strings.Contains(err.Error(), "next is nil") {
		t.Errorf("nil next: err = %v", err)
	}
}

func TestClosedLoop(t *testing.T) {
	t.Parallel()
	send := &fakeSender{latency: fixed(10 * time.Millisecond)}
	var calls []int
	res, err := Run(context.Background(), Config{Concurrency: 4, Requests: 40, Warmup: 2}, send, nextFunc(&calls))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(res.Samples), 42; got != want {
		t.Fatalf("%d samples, want %d", got, want)
	}
	checkDense(t, res, 2)
	for i, c := range calls {
		if c != i {
			t.Fatalf("next called with %v, want 0, 1, 2, ...", calls)
		}
	}
	if res.MaxInFlight != 4 || send.max.Load() != 4 {
		t.Errorf("MaxInFlight = %d, sender saw %d, want 4", res.MaxInFlight, send.max.Load())
	}
	for _, s := range res.Samples[:2] {
		if s.Done.After(res.Start) {
			t.Errorf("warm-up request %d ended after the measured phase started", s.Index)
		}
	}
	if !res.Samples[1].Sent.After(res.Samples[0].Done) && !res.Samples[1].Sent.Equal(res.Samples[0].Done) {
		t.Error("warm-up requests overlapped: they must go one at a time")
	}
	var last time.Time
	for _, s := range res.Measured() {
		if s.Done.After(last) {
			last = s.Done
		}
		if q := s.QueueTime(); q > 50*time.Millisecond {
			t.Errorf("closed-loop request %d has queue time %v", s.Index, q)
		}
	}
	if !res.End.Equal(last) {
		t.Errorf("End = %v, want the last Done %v", res.End, last)
	}
	if res.Canceled || res.Backlog != 0 || res.GraceCut != 0 {
		t.Errorf("unexpected Canceled=%v Backlog=%d GraceCut=%d", res.Canceled, res.Backlog, res.GraceCut)
	}
}

func TestOpenLoopInfRateCapped(t *testing.T) {
	t.Parallel()
	send := &fakeSender{latency: fixed(5 * time.Millisecond)}
	var calls []int
	res, err := Run(context.Background(), Config{Rate: math.Inf(1), MaxConcurrency: 3, Requests: 12}, send, nextFunc(&calls))
	if err != nil {
		t.Fatal(err)
	}
	checkDense(t, res, 0)
	if got := send.max.Load(); got > 3 {
		t.Errorf("sender saw %d in flight, cap is 3", got)
	}
	if res.MaxInFlight != 3 {
		t.Errorf("MaxInFlight = %d, want 3", res.MaxInFlight)
	}
	for _, s := range res.Samples {
		if !s.Scheduled.Equal(res.Start) {
			t.Fatalf("request %d scheduled at %v, want all at Start", s.Index, s.Scheduled.Sub(res.Start))
		}
	}
	// The last three waited on the cap for at least three rounds of 5 ms.
	if q := res.Samples[11].QueueTime(); q < 15*time.Millisecond {
		t.Errorf("request 11 queue time = %v, want ≥ 15ms (waiting on MaxConcurrency)", q)
	}
}

func TestOpenLoopConstantRate(t *testing.T) {
	t.Parallel()
	send := &fakeSender{latency: fixed(time.Millisecond)}
	var calls []int
	res, err := Run(context.Background(), Config{Rate: 256, Burstiness: math.Inf(1), Requests: 10}, send, nextFunc(&calls))
	if err != nil {
		t.Fatal(err)
	}
	checkDense(t, res, 0)
	for k, s := range res.Samples {
		// 1/256 s = 3906250 ns exactly.
		if got, want := s.Scheduled.Sub(res.Start), time.Duration(k)*3906250; got != want {
			t.Errorf("request %d scheduled at %v, want %v", k, got, want)
		}
		if s.Sent.Before(s.Scheduled) {
			t.Errorf("request %d sent before it was due", k)
		}
	}
}

func TestDurationBound(t *testing.T) {
	t.Parallel()
	send := &fakeSender{latency: fixed(4 * time.Millisecond)}
	var calls []int
	var totals []int
	cfg := Config{Concurrency: 2, Duration: 60 * time.Millisecond, Warmup: 1, Progress: func(_, total int) { totals = append(totals, total) }}
	res, err := Run(context.Background(), cfg, send, nextFunc(&calls))
	if err != nil {
		t.Fatal(err)
	}
	checkDense(t, res, 1)
	// Both slots are filled at the start; how many more fit depends on
	// the machine's load, so only that much is certain.
	if n := len(res.Measured()); n < 2 {
		t.Errorf("only %d measured requests in 60ms with 2 in flight", n)
	}
	deadline := res.Start.Add(cfg.Duration)
	for _, s := range res.Measured() {
		if s.Scheduled.After(deadline) {
			t.Errorf("request %d dispatched %v after the deadline", s.Index, s.Scheduled.Sub(deadline))
		}
		if !s.OK() {
			t.Errorf("request %d failed: %v", s.Index, s.Err)
		}
	}
	for _, total := range totals {
		if total != -1 {
			t.Fatalf("Progress total = %d, want -1 for a Duration-only run", total)
		}
	}
}

func TestGraceCut(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	send := &fakeSender{latency: fixed(time.Minute)}
	var calls []int
	begin := time.Now()
	res, err := Run(context.Background(), Config{Concurrency: 3, Duration: 20 * time.Millisecond, Grace: 20 * time.Millisecond}, send, nextFunc(&calls))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("Run took %v; the grace period should have cut it at ~40ms", took)
	}
	if got, want := len(res.Samples), 3; got != want {
		t.Fatalf("%d samples, want %d", got, want)
	}
	if res.GraceCut != 3 {
		t.Errorf("GraceCut = %d, want 3", res.GraceCut)
	}
	// A grace cut is a failure of its own kind, not an interruption.
	for _, s := range res.Samples {
		if s.Err == nil || s.Err.Kind != sample.ErrGraceExpired || !strings.Contains(s.Err.Message, "grace period (20ms)") {
			t.Errorf("request %d: Err = %v, want grace_expired naming the grace period", s.Index, s.Err)
		}
	}
	if res.Canceled || res.Stop != StopFinished {
		t.Errorf("Canceled = %v, Stop = %v, but the caller did not cancel", res.Canceled, res.Stop)
	}
}

func TestCancel(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
	}{
		// Canceled while the closed loop's requests are in flight.
		{"closed loop", Config{Concurrency: 2, Requests: 1000}},
		// Canceled while the open loop waits for the next arrival.
		{"open loop", Config{Rate: 0.5, Requests: 1000}},
		// Canceled during warm-up: nothing measured.
		{"warm-up", Config{Concurrency: 2, Requests: 1000, Warmup: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
			defer cancel()
			send := &fakeSender{latency: fixed(10 * time.Second)}
			var calls []int
			begin := time.Now()
			res, err := Run(ctx, tt.cfg, send, nextFunc(&calls))
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(begin); took > 5*time.Second {
				t.Errorf("Run took %v after cancellation", took)
			}
			if !res.Canceled || res.Stop != StopInterrupted {
				t.Errorf("Canceled = %v, Stop = %v, want true, interrupted", res.Canceled, res.Stop)
			}
			if len(res.Samples) == 0 || len(res.Samples) >= 1000 {
				t.Fatalf("%d samples, want the partial few sent before cancellation", len(res.Samples))
			}
			checkDense(t, res, tt.cfg.Warmup)
			for _, s := range res.Samples {
				if s.Err == nil || s.Err.Kind != sample.ErrCanceled {
					t.Errorf("request %d: Err = %v, want a cancellation", s.Index, s.Err)
				}
			}
		})
	}
}

func TestBacklog(t *testing.T) {
	t.Parallel()
	// The first request holds the only slot past the 30ms deadline; arrivals
	// come every 1/1024 s, so those at k/1024 s for k = 1..30 were due.
	send := &fakeSender{latency: func(i int) time.Duration {
		if i == 0 {
			return 80 * time.Millisecond
		}
		return time.Millisecond
	}}
	var calls []int
	res, err := Run(context.Background(), Config{Rate: 1024, Burstiness: math.Inf(1), MaxConcurrency: 1, Duration: 30 * time.Millisecond, Grace: time.Second}, send, nextFunc(&calls))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(res.Samples), 1; got != want {
		t.Errorf("%d samples, want %d", got, want)
	}
	if got, want := res.Backlog, 30; got != want {
		t.Errorf("Backlog = %d, want %d", got, want)
	}
}

func TestProgress(t *testing.T) {
	t.Parallel()
	send := &fakeSender{latency: fixed(0)}
	var calls []int
	var dones, totals []int
	cfg := Config{Concurrency: 3, Requests: 20, Warmup: 2, Progress: func(done, total int) {
		dones = append(dones, done)
		totals = append(totals, total)
	}}
	if _, err := Run(context.Background(), cfg, send, nextFunc(&calls)); err != nil {
		t.Fatal(err)
	}
	if len(dones) != 22 {
		t.Fatalf("Progress called %d times, want 22", len(dones))
	}
	for i := range dones {
		if dones[i] != i+1 || totals[i] != 22 {
			t.Fatalf("call %d: Progress(%d, %d), want (%d, 22)", i, dones[i], totals[i], i+1)
		}
	}
}

// TestSenderWithoutDone checks that a Sender that forgets Done still yields
// usable samples.
func TestSenderWithoutDone(t *testing.T) {
	t.Parallel()
	lazy := SenderFunc(func(_ context.Context, _ openai.Request, s *sample.Sample) { s.Sent = time.Now() })
	res, err := Run(context.Background(), Config{Concurrency: 1, Requests: 3}, lazy, func(int) openai.Request { return openai.Request{} })
	if err != nil {
		t.Fatal(err)
	}
	checkDense(t, res, 0)
}
