package load

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/overload"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// queueServer serves one request at a time, each for service, in arrival
// order: its capacity is 1/service requests per second, and a request's
// TTFT is its wait in the queue plus its service.
type queueServer struct {
	service time.Duration
	slot    chan struct{}
}

func newQueueServer(service time.Duration) *queueServer {
	return &queueServer{service: service, slot: make(chan struct{}, 1)}
}

func (q *queueServer) Send(ctx context.Context, _ openai.Request, s *sample.Sample) {
	s.Sent = time.Now()
	select {
	case q.slot <- struct{}{}:
	case <-ctx.Done():
		s.Fail(sample.ErrCanceled, 0, ctx.Err().Error())
		return
	}
	defer func() { <-q.slot }()
	t := time.NewTimer(q.service)
	defer t.Stop()
	select {
	case <-t.C:
		s.Chunks = []sample.Chunk{{At: time.Since(s.Sent)}}
		sample.FirstToken(ctx, s.Sent, s.Sent.Add(s.Chunks[0].At))
		s.CompletionTokens = 1
	case <-ctx.Done():
		s.Fail(sample.ErrCanceled, 0, ctx.Err().Error())
	}
	s.Done = time.Now()
}

// fastRule is the overload rule on a test's time scale.
func fastRule() *overload.Rule {
	r := overload.DefaultRule()
	r.Window, r.Interval, r.MinQueue = 800*time.Millisecond, 40*time.Millisecond, 8
	return &r
}

func TestOverloadStopsOpenLoop(t *testing.T) {
	testphase.Timed(t)
	for _, tc := range []struct {
		name string
		cap  int
	}{
		// The queue grows in flight, at the server.
		{"uncapped", 0},
		// The queue grows on the client, waiting on the cap: the wait
		// from arrival to first token grows with it.
		{"capped by --max-concurrency", 4},
	} {
		t.Run(tc.name, func(t *testing.T) { overloadStops(t, tc.cap) })
	}
}

// overloadStops offers 250 req/s, capped at maxConc in flight, to a server
// that takes 50 req/s: the queue grows 200/s. Unwatched, the run would
// last 2000/50 = 40 s.
func overloadStops(t *testing.T, maxConc int) {
	cfg := Config{Rate: 250, Burstiness: math.Inf(1), Requests: 2000, MaxConcurrency: maxConc, Overload: fastRule()}
	began := time.Now()
	res, err := Run(context.Background(), cfg, newQueueServer(20*time.Millisecond), nextFunc(new([]int)))
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 5*time.Second {
		t.Errorf("the run took %v, want a stop within a few windows", took)
	}
	if res.Stop != StopOverloaded || res.Overload == nil {
		t.Fatalf("Stop = %v, Overload = %v; want overloaded with a verdict", res.Stop, res.Overload)
	}
	v := res.Overload
	if v.Offered < 150 || v.Offered > 300 || v.Achieved < 20 || v.Achieved > 70 {
		t.Errorf("verdict offered %.1f req/s, achieved %.1f req/s; want about 250 and 50", v.Offered, v.Achieved)
	}
	if res.Canceled {
		t.Error("Canceled is set: an overload stop is not an interruption by the caller")
	}
	cut := 0
	for _, s := range res.Measured() {
		if s.Interrupted() {
			cut++
			if !strings.Contains(s.Err.Message, "overloaded") {
				t.Errorf("request %d: %q, want the overload named", s.Index, s.Err.Message)
			}
		}
	}
	if (maxConc == 0 && cut == 0) || len(res.Measured()) >= 2000 {
		t.Errorf("%d of %d requests sent, %d cut: want dispatch stopped and those in flight canceled", len(res.Measured()), 2000, cut)
	}
}

func TestOverloadNeverStops(t *testing.T) {
	testphase.Timed(t)
	// A burst of 25 requests at once, then 10 req/s, against 50 req/s.
	burst := make([]time.Duration, 45)
	for k := 25; k < len(burst); k++ {
		burst[k] = time.Duration(k-24) * 100 * time.Millisecond
	}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		// A closed loop keeps its queue at the concurrency: never watched.
		{"closed loop on a slow server", Config{Concurrency: 16, Requests: 50}},
		// Offered below capacity.
		{"open loop under capacity", Config{Rate: 25, Requests: 60}},
		// The burst queues, then drains at the steady rate.
		{"burst that levels off", Config{Arrivals: burst}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Overload = fastRule()
			res, err := Run(context.Background(), cfg, newQueueServer(20*time.Millisecond), nextFunc(new([]int)))
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != StopFinished || res.Overload != nil {
				t.Fatalf("Stop = %v (%v), want finished", res.Stop, res.Overload)
			}
		})
	}
}

func TestRampPacer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		ramp      Ramp
		n         int
		wantRates []float64 // at request 0, n/2, n−1
	}{
		{"linear", Ramp{RampLinear, 1, 21}, 21, []float64{1, 11, 21}},
		{"exponential", Ramp{RampExponential, 1, 100}, 21, []float64{1, 10, 100}},
		{"one request", Ramp{RampLinear, 2, 4}, 1, []float64{2, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, k := range []int{0, tc.n / 2, tc.n - 1} {
				if got := tc.ramp.RateAt(k, tc.n); math.Abs(got-tc.wantRates[i]) > 1e-9 {
					t.Errorf("RateAt(%d, %d) = %v, want %v", k, tc.n, got, tc.wantRates[i])
				}
			}
			p, err := NewRampPacer(tc.ramp, tc.n, math.Inf(1), 1)
			if err != nil {
				t.Fatal(err)
			}
			var prev time.Duration
			for k := 1; k < tc.n; k++ {
				at, stop := p.Arrival(k)
				gap := (at - prev).Seconds()
				if want := 1 / tc.ramp.RateAt(k, tc.n); stop || math.Abs(gap-want) > 1e-6 {
					t.Fatalf("gap before request %d = %v s (stop %v), want 1/rate = %v s", k, gap, stop, want)
				}
				prev = at
			}
			if _, stop := p.Arrival(tc.n); !stop {
				t.Errorf("Arrival(%d) does not stop after the last request", tc.n)
			}
		})
	}
}

func TestRampValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"zero start", Config{Ramp: &Ramp{RampLinear, 0, 10}, Requests: 10}, "start 0 req/s"},
		{"start above end", Config{Ramp: &Ramp{RampLinear, 5, 1}, Requests: 10}, "swap them"},
		{"unknown strategy", Config{Ramp: &Ramp{"step", 1, 2}, Requests: 10}, `strategy "step"`},
		{"with a rate", Config{Ramp: &Ramp{RampLinear, 1, 2}, Rate: 3, Requests: 10}, "a ramp sets its own rate"},
		{"no request count", Config{Ramp: &Ramp{RampLinear, 1, 2}, Duration: time.Second}, "set Requests"},
		{"bad overload rule", Config{Rate: 1, Requests: 1, Overload: &overload.Rule{}}, "Overload: overload: invalid rule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestMissesStopADecidedRun(t *testing.T) {
	testphase.Timed(t)
	failed := func(s *sample.Sample) bool { return !s.OK() }
	for _, tc := range []struct {
		name     string
		misses   Misses
		want     StopReason
		atLeast  int // requests sent
		atMost   int
		reported int // Decided.Missed
	}{
		// Every first token comes after 20 ms, over the 1 ms limit: the
		// third miss decides it.
		{"first tokens over the limit", Misses{Allowed: 2, TTFT: time.Millisecond, Missed: failed}, StopDecided, 3, 20, 3},
		// Within the limit, nothing missed: the run goes to its end.
		{"within the SLO", Misses{Allowed: 0, TTFT: 10 * time.Second, Missed: failed}, StopFinished, 30, 30, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Rate: 100, Burstiness: math.Inf(1), Requests: 30, Misses: &tc.misses}
			res, err := Run(context.Background(), cfg, newQueueServer(20*time.Millisecond), nextFunc(new([]int)))
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != tc.want {
				t.Fatalf("Stop = %v, want %v", res.Stop, tc.want)
			}
			if n := len(res.Measured()); n < tc.atLeast || n > tc.atMost {
				t.Errorf("%d requests sent, want %d to %d", n, tc.atLeast, tc.atMost)
			}
			if tc.want == StopDecided && (res.Decided == nil || res.Decided.Missed != tc.reported || !strings.Contains(res.Decided.Error(), "more than the 2 a passing run allows")) {
				t.Errorf("Decided = %v, want %d misses reported", res.Decided, tc.reported)
			}
		})
	}
}
