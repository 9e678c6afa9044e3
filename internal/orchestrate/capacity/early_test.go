package capacity

import (
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/overload"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
)

func TestRunnerMisses(t *testing.T) {
	slo := stats.SLO{TTFT: 500 * time.Millisecond, TPOT: 100 * time.Millisecond}
	for _, tc := range []struct {
		name       string
		goodputMin float64
		level      float64
		d          time.Duration
		allowed    int // -1: no early stop
	}{
		// 4 req/s for 12.5 s: 50 expected, 100 at most, 1% of them.
		{"quick size", 0.99, 4, 12500 * time.Millisecond, 1},
		// 100 expected: 2 misses allowed.
		{"full size", 0.99, 4, 25 * time.Second, 2},
		{"a lax minimum", 0.9, 1, 100 * time.Second, 20},
		// 10 expected: up to 10 + 6·√10 + 6 = 35 requests, 0.35 misses.
		{"a short run", 0.99, 2, 5 * time.Second, 0},
		// 40 expected: up to 84, not 80.
		{"a run under 50 requests", 0.9, 4, 10 * time.Second, 8},
		{"no minimum", 0, 4, time.Minute, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Runner{Mode: Rate, SLO: slo, GoodputMin: tc.goodputMin}
			m := r.misses(tc.level, tc.d)
			if tc.allowed < 0 {
				if m != nil {
					t.Fatalf("misses = %+v, want none", m)
				}
				return
			}
			if m == nil || m.Allowed != tc.allowed || m.TTFT != slo.TTFT {
				t.Fatalf("misses = %+v, want %d allowed with TTFT limit %v", m, tc.allowed, slo.TTFT)
			}
			bad := sample.Sample{Err: &sample.Error{Kind: sample.ErrTimeout}}
			if !m.Missed(&bad) {
				t.Error("a failed request does not count as a miss")
			}
		})
	}
	p := Runner{Mode: Concurrency, SLO: slo, GoodputMin: 0.99, Sizing: Sizing{MinDuration: time.Second}}.Point(4)
	if p.Load.Misses != nil {
		t.Error("a closed loop's run stops on misses: its request count is not known in advance")
	}
}

func TestStoppedEarly(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cut := func(i int, ttft time.Duration) sample.Sample {
		s := sample.Sample{Index: i, Sent: t0, Scheduled: t0, Done: t0.Add(2 * time.Second), Err: &sample.Error{Kind: sample.ErrCanceled}}
		s.Chunks = []sample.Chunk{{At: ttft}}
		return s
	}
	ms := []sample.Sample{cut(0, time.Second), cut(1, 2*time.Second), cut(2, 100*time.Millisecond)}
	slo := stats.SLO{TTFT: 500 * time.Millisecond}
	for _, tc := range []struct {
		name      string
		lr        load.Result
		stopped   string // "" none
		requests  int
		users     float64
		pace      float64
		passCheck bool
	}{
		{"decided", load.Result{Stop: load.StopDecided, Decided: &load.Decided{Missed: 2, Allowed: 1, At: time.Second}}, "2 requests missed the SLO", 2, 3, 0, false},
		{"overloaded", load.Result{Stop: load.StopOverloaded, Overload: &overload.Verdict{Offered: 8, Achieved: 1, Pace: 1.5}}, "OVERLOADED: offered 8 req/s", 2, 3, 1.5, false},
		{"ran to the end", load.Result{}, "", 0, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr := tc.lr
			lr.Samples, lr.Start, lr.End = ms, t0, t0.Add(2*time.Second)
			res := &result.Result{Point: scenario.Point{Load: load.Config{Rate: 4}}, Load: &lr, Summary: &stats.Summary{SLO: slo}}
			var tr Trial
			stoppedEarly(&tr, res)
			if !strings.Contains(tr.Stopped, tc.stopped) || (tc.stopped == "") != (tr.Stopped == "") {
				t.Errorf("Stopped = %q, want %q", tr.Stopped, tc.stopped)
			}
			if tr.Requests != tc.requests || tr.Users != tc.users {
				t.Errorf("requests %d, users %v; want %d (the first tokens over the SLO) and %v (three requests in flight throughout)", tr.Requests, tr.Users, tc.requests, tc.users)
			}
			if tr.Pace != tc.pace {
				t.Errorf("pace %v, want %v (the overload verdict's, else none)", tr.Pace, tc.pace)
			}
			tr.Good = tr.Requests
			if tr.Requests == 0 {
				tr.Requests, tr.Good = 1, 1
			}
			if got := config(Rate, 1).Passes(tr); got != tc.passCheck {
				t.Errorf("Passes = %v, want %v: a run stopped early fails", got, tc.passCheck)
			}
		})
	}
}
