package vllmsim

import (
	"math/rand/v2"
	"sync"
)

// faultInjector draws the per-request faults from a generator seeded by
// --sim-seed, so that the same seed and the same request order give the same
// faults.
type faultInjector struct {
	opts FaultOptions
	mu   sync.Mutex
	rng  *rand.Rand
}

// requestFaults are the faults chosen for one request.
type requestFaults struct {
	// status is 500 or 429 for a request answered with that error without
	// running, else 0.
	status int
	// disconnectAt is how many engine outputs go out before the connection
	// is cut (0: never). A response that ends earlier is cut before its last
	// output.
	disconnectAt int
	// stallAt is the 1-based engine output before which the stream pauses
	// for stallFor (0: never).
	stallAt int
}

func newFaultInjector(seed int64, opts FaultOptions) *faultInjector {
	return &faultInjector{opts: opts, rng: rand.New(rand.NewPCG(uint64(seed), 0x766c6c6d2d73696d))} // "vllm-sim"
}

// draw picks one request's faults. maxOutputs bounds where a mid-stream
// fault lands: uniformly in the first half of the expected outputs. The
// generator is consulted the same number of times for every request, so
// one request's draw never shifts another's.
func (f *faultInjector) draw(maxOutputs int) requestFaults {
	f.mu.Lock()
	defer f.mu.Unlock()
	half := max(1, maxOutputs/2)
	uStatus, uDisc, uStall := f.rng.Float64(), f.rng.Float64(), f.rng.Float64()
	discAt, stallAt := 1+f.rng.IntN(half), 1+f.rng.IntN(half)
	var rf requestFaults
	switch {
	case uStatus < f.opts.Rate500:
		rf.status = 500
	case uStatus < f.opts.Rate500+f.opts.Rate429:
		rf.status = 429
	}
	if uDisc < f.opts.DisconnectRate {
		rf.disconnectAt = discAt
	}
	if uStall < f.opts.StallRate {
		rf.stallAt = stallAt
	}
	return rf
}
