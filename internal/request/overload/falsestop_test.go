package overload

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// The false-stop protocol (docs/load-shapes.md), fixed before measuring:
// a server is c = 8 slots, each serving one request at a time for a
// gamma-distributed time (shape 4, mean 2 s: a 2 s E2EL with a 25%
// spread); arrivals are Poisson at ρ·c/2 s; a request's first token comes
// 50 ms after it takes a slot. Each run lasts 5 simulated minutes,
// observed every DefaultInterval as the load generator observes it, and
// the DefaultRule judges it. 200 runs (seeds 1–200) per utilisation ρ.
// A run at ρ < 1 that the rule stops is a false stop; at ρ > 1 the time
// to the verdict is the detection time. The rates are stated in
// docs/load-shapes.md; this test fails when they drift from what it
// states.
const (
	fsSlots    = 8
	fsService  = 2.0 // seconds, mean
	fsShape    = 4.0
	fsPrefill  = 0.05
	fsRunFor   = 5 * time.Minute
	fsRuns     = 200
	fsInterval = DefaultInterval
)

// queueRun simulates one run at utilisation rho with seed and returns
// the rule's verdict, nil when it never stopped the run.
func queueRun(rho float64, seed uint64) *Verdict {
	rng := rand.New(rand.NewPCG(seed, 7))
	det, _ := New(DefaultRule())
	lambda := rho * fsSlots / fsService
	var (
		ends    endHeap // service ends of busy slots
		waiting []float64
		next    = rng.ExpFloat64() / lambda
		due     int
		ended   int
		ttfts   []time.Duration
	)
	start := func(now, arrived float64) {
		heap.Push(&ends, now+gamma(rng, fsShape)*fsService/fsShape)
		ttfts = append(ttfts, time.Duration((now-arrived+fsPrefill)*float64(time.Second)))
	}
	for at := fsInterval; at <= fsRunFor; at += fsInterval {
		now := at.Seconds()
		for {
			switch {
			case ends.Len() > 0 && ends[0] <= next && ends[0] <= now:
				t := heap.Pop(&ends).(float64)
				ended++
				if len(waiting) > 0 {
					start(t, waiting[0])
					waiting = waiting[1:]
				}
				continue
			case next <= now:
				due++
				if ends.Len() < fsSlots {
					start(next, next)
				} else {
					waiting = append(waiting, next)
				}
				next += rng.ExpFloat64() / lambda
				continue
			}
			break
		}
		o := Observation{At: at, Queue: float64(due - ended), Completed: ended, Due: due}
		if len(ttfts) > 0 {
			o.TTFT, o.HasTTFT = Median(ttfts), true
			ttfts = ttfts[:0]
		}
		if v := det.Add(o); v != nil {
			return v
		}
	}
	return nil
}

// gamma draws from Gamma(shape, 1), shape ≥ 1 (Marsaglia and Tsang).
func gamma(r *rand.Rand, shape float64) float64 {
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		if u := r.Float64(); math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

type endHeap []float64

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// TestFalseStopRate runs the protocol above and holds the rule to the
// rates docs/load-shapes.md states.
func TestFalseStopRate(t *testing.T) {
	for _, tc := range []struct {
		rho       float64
		stops     int           // of fsRuns, as measured and stated
		maxDetect time.Duration // the slowest verdict, when every run stops
	}{
		{0.5, 0, 0},
		{0.8, 0, 0},
		{0.9, 0, 0},
		{0.95, 4, 0},
		{1.2, 74, 0},
		{1.5, 196, 0},
		{2.0, fsRuns, 30 * time.Second},
	} {
		t.Run(fmt.Sprintf("rho=%v", tc.rho), func(t *testing.T) {
			stops := 0
			var slowest time.Duration
			for seed := uint64(1); seed <= fsRuns; seed++ {
				if v := queueRun(tc.rho, seed); v != nil {
					stops++
					slowest = max(slowest, v.At)
				}
			}
			t.Logf("ρ = %v: %d of %d runs stopped (%.1f%%), the last verdict %v into its run", tc.rho, stops, fsRuns, 100*float64(stops)/fsRuns, slowest)
			if stops != tc.stops {
				t.Errorf("%d of %d runs stopped, docs/load-shapes.md states %d: the rule changed; measure again and restate", stops, fsRuns, tc.stops)
			}
			if tc.maxDetect > 0 && slowest > tc.maxDetect {
				t.Errorf("the slowest verdict came %v into its run, want within %v", slowest, tc.maxDetect)
			}
		})
	}
}
