package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// frontend is the API server in front of the engine core (FrontendPreset):
// a request's input work (HTTP, chat template, tokenization) runs on the
// earliest free of a few workers, first come first served, and only then
// does the request reach the engine's waiting queue; every emitted token
// takes PerOutputToken of the workers' time (detokenization, streaming), so
// output traffic slows the intake of new requests as it does in vLLM's
// single API server process. Guarded by the engine's lock.
type frontend struct {
	p       FrontendPreset
	free    []time.Time // when each worker is next free
	pending []*seq      // requests in the front end, by readyAt
	noise   noise
}

// frontendStream is the PCG stream of the front end's noise generator
// (seeded by Config.Seed), apart from jitterStream and requestStream.
const frontendStream = 0x2545f4914f6cdd1d

// frontendNoiseScale is the front end's relative noise per unit of
// Config.Jitter: Python request handling (GC pauses, the event loop) varies
// more than GPU steps do.
const frontendNoiseScale = 2

func newFrontend(p FrontendPreset, jitter float64, seed int64) *frontend {
	w := max(1, p.Workers)
	return &frontend{
		p:     p,
		free:  make([]time.Time, w),
		noise: noise{rng: rand.New(rand.NewPCG(uint64(seed), frontendStream)), sd: jitter * frontendNoiseScale},
	}
}

// active reports whether the front end costs anything.
func (f *frontend) active() bool {
	return f.p.Latency > 0 || f.p.Base > 0 || f.p.PerPromptToken > 0 || f.p.PerOutputToken > 0
}

// admit takes a request arriving at its arrival time: its input work runs
// on the earliest free worker, and it is ready for the engine Latency after
// the work is done (seq.readyAt).
func (f *frontend) admit(s *seq) {
	work := f.p.Base + time.Duration(s.promptLen)*f.p.PerPromptToken
	work = f.noise.lognormal(work)
	i := 0
	for j := range f.free {
		if f.free[j].Before(f.free[i]) {
			i = j
		}
	}
	start := s.arrival
	if f.free[i].After(start) {
		start = f.free[i]
	}
	f.free[i] = start.Add(work)
	s.readyAt = f.free[i].Add(f.noise.lognormal(f.p.Latency))
	at, _ := slices.BinarySearchFunc(f.pending, s.readyAt, func(p *seq, t time.Time) int {
		if p.readyAt.After(t) {
			return 1
		}
		return -1 // equal times keep arrival order
	})
	f.pending = slices.Insert(f.pending, at, s)
}

// output charges the workers for n tokens emitted at now, shared evenly.
func (f *frontend) output(now time.Time, n int) {
	if f.p.PerOutputToken <= 0 || n <= 0 {
		return
	}
	work := f.noise.lognormal(time.Duration(n) * f.p.PerOutputToken)
	share := work / time.Duration(len(f.free))
	for i := range f.free {
		if f.free[i].Before(now) {
			f.free[i] = now
		}
		f.free[i] = f.free[i].Add(share)
	}
}

// ready removes and returns the requests whose input work is done by now,
// in the order they became ready.
func (f *frontend) ready(now time.Time) []*seq {
	n := 0
	for n < len(f.pending) && !f.pending[n].readyAt.After(now) {
		n++
	}
	out := f.pending[:n:n]
	f.pending = f.pending[n:]
	return out
}

// next is when the next pending request becomes ready (zero: none).
func (f *frontend) next() time.Time {
	if len(f.pending) == 0 {
		return time.Time{}
	}
	return f.pending[0].readyAt
}

// drop removes s from the pending requests, if it is there.
func (f *frontend) drop(s *seq) {
	if i := slices.Index(f.pending, s); i >= 0 {
		f.pending = slices.Delete(f.pending, i, i+1)
	}
}

// noise draws seeded multiplicative noise with relative standard deviation
// sd (0: none).
type noise struct {
	rng *rand.Rand
	sd  float64
}

// lognormal multiplies d by a log-normal factor of median 1 and log
// standard deviation sd: never negative, with a right tail, as service
// times are.
func (n noise) lognormal(d time.Duration) time.Duration {
	if n.sd <= 0 || d <= 0 {
		return d
	}
	return time.Duration(float64(d) * math.Exp(n.sd*n.rng.NormFloat64()))
}
