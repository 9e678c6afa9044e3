package overload

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// shape gives the queue and the TTFT (seconds; NaN: no request ended) at
// t seconds into a run.
type shape func(t float64) (queue, ttft float64)

// feed observes s every DefaultInterval for d on fake time and returns the
// first verdict (nil for none). The queue wanders from s as a random walk
// whose steps have standard deviation noise (requests), as arrivals and
// departures make it; TTFT has a relative noise of 10%.
func feed(t *testing.T, s shape, d time.Duration, noise float64) *Verdict {
	t.Helper()
	det, err := New(DefaultRule())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	done, due, walk := 0, 0, 0.0
	for at := time.Duration(0); at <= d; at += DefaultInterval {
		q, ttft := s(at.Seconds())
		walk += noise * rng.NormFloat64()
		if q+walk < 0 {
			walk = -q // a queue is never negative
		}
		o := Observation{At: at, Queue: q + walk, Due: due, Completed: done}
		due += 10 // 20 req/s
		if !math.IsNaN(ttft) {
			o.TTFT, o.HasTTFT = time.Duration(ttft*(1+0.1*rng.NormFloat64())*float64(time.Second)), true
			done += 5
		}
		if v := det.Add(o); v != nil {
			return v
		}
	}
	return nil
}

func TestDetector(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shape shape
		noise float64
		want  bool // a verdict within the run
	}{
		// Offered far above capacity: the queue grows 150/s and the
		// wait in it with the queue.
		{"hopeless overload", func(t float64) (float64, float64) { return 150 * t, 0.2 + 0.9*t }, 10, true},
		// Twice the capacity: 10 requests/s more than the server takes.
		{"double the capacity", func(t float64) (float64, float64) { return 10 * t, 0.1 + 0.5*t }, 4, true},
		// A burst of 60 requests in 3 s that the server then holds at
		// a level: the queue and TTFT stop growing.
		{"burst that levels off", func(t float64) (float64, float64) {
			return 20 * math.Min(t, 3), 0.1 + 0.5*math.Min(t, 3)
		}, 4, false},
		// A burst followed by a slow drain.
		{"burst that drains", func(t float64) (float64, float64) {
			if t < 4 {
				return 15 * t, 0.1 + 0.4*t
			}
			return math.Max(60-3*(t-4), 5), math.Max(1.7-0.1*(t-4), 0.1)
		}, 4, false},
		// Long requests at a steady rate: the in-flight count climbs
		// to λ·E2EL over 25 s before the first request ends (Little's
		// law), then holds; TTFT is flat.
		{"long requests filling up", func(t float64) (float64, float64) {
			if t < 25 {
				return 2 * t, math.NaN()
			}
			return 50, 0.3
		}, 4, false},
		// A busy but stable server: a noisy queue around 40 and flat TTFT.
		{"stable under load", func(float64) (float64, float64) { return 40, 0.5 }, 4, false},
		// The queue grows but TTFT does not (a client-side artefact, or
		// a server that admits everything): not this rule's overload.
		{"queue without TTFT growth", func(t float64) (float64, float64) { return 10 * t, 0.3 }, 4, false},
		// A closed loop: the queue is the concurrency, constant.
		{"closed loop", func(float64) (float64, float64) { return 64, 2 }, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := feed(t, tc.shape, 90*time.Second, tc.noise)
			if got := v != nil; got != tc.want {
				t.Fatalf("verdict = %v, want one: %v", v, tc.want)
			}
			if v == nil {
				return
			}
			if v.At < DefaultWindow || v.At > 2*DefaultWindow {
				t.Errorf("verdict at %v, want within the second window (%v to %v)", v.At, DefaultWindow, 2*DefaultWindow)
			}
			msg := v.Error()
			for _, want := range []string{"OVERLOADED: offered 20 req/s", "achieved", "queue growing"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

func TestRuleValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Rule)
		want string // "" valid
	}{
		{"default", func(*Rule) {}, ""},
		{"window shorter than 4 intervals", func(r *Rule) { r.Window = time.Second }, "Window = 1s"},
		{"no interval", func(r *Rule) { r.Interval = 0 }, "Interval = 0s"},
		{"too few TTFT points", func(r *Rule) { r.MinTTFTPoints = 2 }, "MinTTFTPoints = 2"},
		{"NaN growth", func(r *Rule) { r.MinGrowth = math.NaN() }, "MinGrowth = NaN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := DefaultRule()
			tc.edit(&r)
			_, err := New(r)
			if tc.want == "" && err != nil {
				t.Fatalf("New = %v, want no error", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("New = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{3, 1, 2}, 2},
		{[]time.Duration{4, 1, 3, 2}, 2},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestFillingIsNoOverload: long requests at a rate the server sustains
// (4 req/s) fill it for longer than a window: the first ones end after
// 7 s and the completions climb to the arrival rate over 20 s more (the
// E2EL grew with the batch), the queue and TTFT rising all along. The
// completions catch up, so no verdict; the same run whose completions
// level off at half the offered rate is overloaded.
func TestFillingIsNoOverload(t *testing.T) {
	for _, tc := range []struct {
		name string
		top  float64 // the completion rate reached, requests/s
		want bool
	}{
		{"completions catch up", 4, false},
		{"completions left behind", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			det, err := New(DefaultRule())
			if err != nil {
				t.Fatal(err)
			}
			// completed by s: the rate climbs linearly from 0 at 7 s to
			// top at 27 s, then holds.
			completed := func(s float64) int {
				switch {
				case s < 7:
					return 0
				case s < 27:
					return int(tc.top * (s - 7) * (s - 7) / 40)
				}
				return int(tc.top*10 + tc.top*(s-27))
			}
			var v *Verdict
			for at := time.Duration(0); at <= 40*time.Second && v == nil; at += DefaultInterval {
				s := at.Seconds()
				done, due := completed(s), int(4*s)
				ttft := time.Duration((0.05 + 0.005*s) * float64(time.Second))
				v = det.Add(Observation{At: at, Queue: float64(due - done), Due: due, Completed: done, TTFT: ttft, HasTTFT: true})
			}
			if got := v != nil; got != tc.want {
				t.Errorf("verdict %v, want one: %v", v, tc.want)
			}
		})
	}
}
