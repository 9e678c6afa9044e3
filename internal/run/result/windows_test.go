package result

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// done is a completed measured request i, arriving at at, sent at sent,
// lasting e2el with its first token after ttft.
func done(i int, at, sent, e2el time.Duration) sample.Sample {
	s := sample.Sample{Index: i, Scheduled: t0.Add(at), Sent: t0.Add(sent), CompletionTokens: 2}
	s.Chunks = []sample.Chunk{{At: e2el / 4}, {At: e2el}}
	s.Done = s.Sent.Add(e2el)
	return s
}

// runOf is the result of cfg over samples, summarized.
func runOf(t *testing.T, cfg load.Config, ms []sample.Sample) *Result {
	t.Helper()
	end := t0
	for _, s := range ms {
		if s.Done.After(end) {
			end = s.Done
		}
	}
	sum, err := stats.Summarize(ms, t0, end, stats.SLO{})
	if err != nil {
		t.Fatal(err)
	}
	return &Result{Point: scenario.Point{Key: "run", Load: cfg}, Load: &load.Result{Samples: ms, Start: t0, End: end}, Summary: sum}
}

func TestSteadyWindow(t *testing.T) {
	t.Parallel()
	sec := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	var closed, open, short []sample.Sample
	for i := range 12 { // concurrency 4, each 1 s: request i sent at i/4 s
		closed = append(closed, done(i, sec(float64(i/4)), sec(float64(i/4)), time.Second))
	}
	for i := range 40 { // 10 req/s, E2EL 2 s
		open = append(open, done(i, sec(float64(i)/10), sec(float64(i)/10), 2*time.Second))
	}
	for i := range 5 { // 10 req/s for 0.4 s, E2EL 2 s: over before it fills
		short = append(short, done(i, sec(float64(i)/10), sec(float64(i)/10), 2*time.Second))
	}
	for _, tc := range []struct {
		name     string
		cfg      load.Config
		ms       []sample.Sample
		from, to time.Duration
		none     string // NoSteady's start when there is no window
	}{
		// From the 4th request sent (t = 0) to the last arrival (t = 2 s).
		{"closed loop", load.Config{Concurrency: 4, Requests: 12}, closed, 0, 2 * time.Second, ""},
		// From one median E2EL (2 s) to the last arrival (3.9 s).
		{"open loop", load.Config{Rate: 10, Requests: 40}, open, 2 * time.Second, sec(3.9), ""},
		{"open loop shorter than its E2EL", load.Config{Rate: 10, Requests: 5}, short, 0, 0, "from one median E2EL"},
		{"closed loop without a spare request", load.Config{Concurrency: 16, Requests: 12}, closed, 0, 0, "12 requests, no more than the concurrency"},
		{"ramp", load.Config{Ramp: &load.Ramp{Strategy: load.RampLinear, StartRPS: 1, EndRPS: 10}, Requests: 40}, open, 0, 0, "a ramp-up changes its rate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := runOf(t, tc.cfg, tc.ms).Windows()
			if w.Carried != "whole run" {
				t.Errorf("Carried = %q, want whole run", w.Carried)
			}
			if tc.none != "" {
				if w.Steady != nil || !strings.HasPrefix(w.NoSteady, tc.none) {
					t.Fatalf("Steady = %+v, NoSteady = %q; want none: %q…", w.Steady, w.NoSteady, tc.none)
				}
				return
			}
			if w.Steady == nil {
				t.Fatalf("no steady window: %s", w.NoSteady)
			}
			if got := w.Steady; got.From != tc.from || got.To != tc.to {
				t.Errorf("window %v to %v, want %v to %v", got.From, got.To, tc.from, tc.to)
			}
		})
	}
}

func TestRampVerdicts(t *testing.T) {
	t.Parallel()
	w := func(offered, achieved, ttftP99 float64) Window {
		return Window{Offered: offered, Arrived: offered, Achieved: achieved, Summary: &stats.Summary{Requests: 10, Completed: 10,
			TTFT: stats.Dist{N: 10, Pcts: []stats.Pct{{P: 99, Value: ttftP99}}}}}
	}
	slo := stats.SLO{TTFT: 500 * time.Millisecond}
	for _, tc := range []struct {
		name             string
		ws               []Window
		sloExit, satured float64
		judged           int
	}{
		// Keeps up throughout; the first window's lag is not judged.
		{"follows", []Window{w(1, 0.5, 50), w(2, 2.1, 50), w(3, 2.8, 60), w(4, 4, 60), w(5, 3, 70)}, 0, 0, 3},
		// Plateaus at 3 req/s from the 4 req/s window on; TTFT leaves
		// the SLO at 5.
		{"saturates", []Window{w(1, 1, 50), w(2, 2, 50), w(3, 3, 60), w(4, 3, 300), w(5, 3, 900), w(6, 3, 2000), w(7, 1, 3000)}, 5, 4, 5},
		// One noisy window below 90% does not make a saturation.
		{"one dip", []Window{w(1, 1, 50), w(2, 1.5, 50), w(3, 3, 60), w(4, 4, 60), w(5, 5, 60)}, 0, 0, 3},
		// Two dips with a window that followed after them: none.
		{"recovers", []Window{w(1, 1, 50), w(2, 1, 50), w(3, 2, 60), w(4, 4, 60), w(5, 5, 60)}, 0, 0, 3},
		// Only the last judged window is below: one is not enough.
		{"late dip", []Window{w(1, 1, 50), w(2, 2, 50), w(3, 3, 60), w(4, 2, 60), w(5, 5, 60)}, 0, 0, 3},
		// Three windows: only the middle one is judged; it leaves the SLO.
		{"fewer than four", []Window{w(1, 1, 50), w(2, 1, 900), w(3, 1, 60)}, 2, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exit, sat, judged := rampVerdicts(tc.ws, slo)
			if exit != tc.sloExit || sat != tc.satured || judged != tc.judged {
				t.Errorf("SLO left at %v, saturated at %v, %d judged; want %v, %v and %d", exit, sat, judged, tc.sloExit, tc.satured, tc.judged)
			}
		})
	}
}

func TestFig(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]string{math.NaN(): "-", 3: "3", 2.345: "2.35"} {
		if got := fig(in); got != want {
			t.Errorf("fig(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestRampWindowsAchieved: a ramp's windows count completions in their
// time shifted by their median E2EL, so a server that keeps up follows
// the climb however long its requests take, and one that completes at
// most 8 requests/s is found saturated just above 8 req/s offered.
func TestRampWindowsAchieved(t *testing.T) {
	t.Parallel()
	const n = 100
	ramp := load.Ramp{Strategy: load.RampLinear, StartRPS: 2, EndRPS: 20}
	cfg := load.Config{Ramp: &ramp, Requests: n}
	arrivals := make([]time.Duration, n) // the ramp's gaps, without noise
	for i := 1; i < n; i++ {
		arrivals[i] = arrivals[i-1] + time.Duration(float64(time.Second)/ramp.RateAt(i, n))
	}
	for _, tc := range []struct {
		name     string
		capacity float64 // completions per second at most; 0: no limit
		lo, hi   float64 // the saturation rate's bounds (0, 0: none)
	}{
		{"keeps up", 0, 0, 0},
		{"capacity 8 req/s", 8, 8, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := make([]sample.Sample, n)
			var free time.Duration // when the server can complete the next one
			for i, at := range arrivals {
				e2el := 800 * time.Millisecond
				if tc.capacity > 0 {
					end := max(at+e2el, free)
					free = end + time.Duration(float64(time.Second)/tc.capacity)
					e2el = end - at
				}
				ms[i] = done(i, at, at, e2el)
			}
			w := runOf(t, cfg, ms).Windows()
			if len(w.Ramp) != RampWindows || w.Judged < 2 {
				t.Fatalf("%d windows, %d judged: want %d, most judged", len(w.Ramp), w.Judged, RampWindows)
			}
			if tc.capacity == 0 {
				for _, x := range w.Ramp[1 : len(w.Ramp)-1] {
					if x.Achieved < rampFollow*x.Arrived {
						t.Errorf("window at %.1f req/s achieved %.2f of %.2f arrived: a server that keeps up follows", x.Offered, x.Achieved, x.Arrived)
					}
				}
			}
			if got := w.Saturation; (tc.hi == 0 && got != 0) || (tc.hi > 0 && (got < tc.lo || got > tc.hi)) {
				t.Errorf("saturation at %.2f req/s, want within [%v, %v] (0: none)", got, tc.lo, tc.hi)
			}
		})
	}
}

// TestSteadyMetrics: the steady window's figures come from the same code
// as the whole run's (addSummary), over the window's requests only: an
// open loop whose first requests were slow shows them in the whole run's
// E2EL p99 and not in the window's; a run with no window has none.
func TestSteadyMetrics(t *testing.T) {
	t.Parallel()
	sec := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	var slowStart, short []sample.Sample
	for i := range 40 { // 10 req/s; the first 10 take 6 s, the rest 2 s
		e2el := 2 * time.Second
		if i < 10 {
			e2el = 6 * time.Second
		}
		slowStart = append(slowStart, done(i, sec(float64(i)/10), sec(float64(i)/10), e2el))
	}
	for i := range 5 {
		short = append(short, done(i, sec(float64(i)/10), sec(float64(i)/10), 2*time.Second))
	}
	for _, tc := range []struct {
		name string
		cfg  load.Config
		ms   []sample.Sample
		want map[string]float64 // nil: no steady window
	}{
		// The window runs from 2 s (one median E2EL) to 3.9 s: requests
		// 20 to 39, each 2 s, their TPOT ¾ of it; the last done at 5.9 s.
		{"slow start left out", load.Config{Rate: 10, Requests: 40}, slowStart, map[string]float64{
			units.E2ELP99: 2e9, units.TTFTP50: 0.5e9, units.TPOTP50: 1.5e9, units.TPOTP99: 1.5e9,
			units.ReqPerSec: 20 / 3.9, units.TokPerSec: 40 / 3.9, units.ErrPct: 0}},
		{"too short for a window", load.Config{Rate: 10, Requests: 5}, short, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runOf(t, tc.cfg, tc.ms)
			got := r.SteadyMetrics()
			if tc.want == nil {
				if got != nil {
					t.Fatalf("SteadyMetrics = %v, want nil (%s)", got, r.Windows().NoSteady)
				}
				return
			}
			whole := r.Metrics()
			for u, v := range tc.want {
				if g, ok := got[u]; !ok || math.Abs(g-v) > 1e-9*max(1, math.Abs(v)) {
					t.Errorf("%s = %v (present %v), want %v", u, g, ok, v)
				}
			}
			for u := range got {
				if _, ok := whole[u]; !ok {
					t.Errorf("steady %s: not one of Metrics' units", u)
				}
			}
			if whole[units.E2ELP99] <= got[units.E2ELP99] {
				t.Errorf("whole run's E2EL p99 %v not above the window's %v: the slow start was not left out", whole[units.E2ELP99], got[units.E2ELP99])
			}
		})
	}
}
