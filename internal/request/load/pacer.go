package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// A Pacer decides when each request of an open-loop run is due.
//
// Unlike vegeta's Pacer, whose Pace returns only the wait until the next hit,
// a Pacer here returns the due time itself: when the generator falls behind
// (a request waiting on MaxConcurrency), the lateness of the next arrivals is
// client queue time that must be measured, not forgotten.
type Pacer interface {
	// Arrival returns the offset from the start of dispatch at which
	// measured request n (0-based) is due, or stop when there is none.
	Arrival(n int) (at time.Duration, stop bool)
}

// GammaPacer draws inter-arrival gaps from a gamma distribution with shape b
// (the burstiness) and scale 1/(rate·b), as vLLM's `vllm bench serve` does:
// the mean gap is 1/rate whatever b, and the gaps' coefficient of variation is
// 1/√b (b = 1: a Poisson process; b → ∞: a constant rate). Request 0 is due
// at offset 0 (vLLM also waits one gap before its first request, and rescales
// the gaps so that N requests span exactly N/rate: neither is done here, so
// that a Duration-bounded run needs no N). A GammaPacer is deterministic from
// its seed and not safe for concurrent use.
type GammaPacer struct {
	rate, shape float64
	rng         *rand.Rand
	at          []float64 // cumulative arrival offsets in seconds, at[0] = 0
}

// NewPacer returns a GammaPacer for rate requests/s (math.Inf(1): every
// request due at once) and the given burstiness (math.Inf(1): constant gaps).
func NewPacer(rate, burstiness float64, seed uint64) (*GammaPacer, error) {
	if math.IsNaN(rate) || rate <= 0 {
		return nil, fmt.Errorf("load: pacer rate = %v: must be positive requests/s or +Inf", rate)
	}
	if math.IsNaN(burstiness) || burstiness <= 0 {
		return nil, fmt.Errorf("load: pacer burstiness = %v: must be positive (1 = Poisson) or +Inf (constant rate)", burstiness)
	}
	return &GammaPacer{
		rate:  rate,
		shape: burstiness,
		rng:   rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		at:    []float64{0},
	}, nil
}

// Arrival implements Pacer; it never stops.
func (p *GammaPacer) Arrival(n int) (time.Duration, bool) {
	if n < 0 {
		return 0, true
	}
	for len(p.at) <= n {
		p.at = append(p.at, p.at[len(p.at)-1]+p.gap())
	}
	s := p.at[n] * float64(time.Second)
	if s >= math.MaxInt64 {
		return time.Duration(math.MaxInt64), false
	}
	return time.Duration(s), false
}

// Pace is the vegeta-style view of the same schedule: how long to wait,
// elapsed into the run with sent requests dispatched, until the next one is
// due (0 when it is already due).
func (p *GammaPacer) Pace(elapsed time.Duration, sent uint64) (wait time.Duration, stop bool) {
	if sent > math.MaxInt32 {
		return 0, true
	}
	at, stop := p.Arrival(int(sent))
	if stop || at <= elapsed {
		return 0, stop
	}
	return at - elapsed, false
}

// gap draws one inter-arrival gap in seconds.
func (p *GammaPacer) gap() float64 {
	switch {
	case math.IsInf(p.rate, 1):
		return 0
	case math.IsInf(p.shape, 1):
		return 1 / p.rate
	}
	return gammaRand(p.rng, p.shape) / (p.rate * p.shape)
}

// gammaRand draws from Gamma(shape, 1) by Marsaglia and Tsang's method
// (ACM TOMS 26(3), 2000), boosted for shape < 1.
func gammaRand(r *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gammaRand(r, shape+1) * math.Pow(r.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		var x, v float64
		for {
			x = r.NormFloat64()
			v = 1 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// TracePacer replays a recorded schedule: request n is due at offset n of
// the trace, and there is none after the last.
type TracePacer []time.Duration

// Arrival implements Pacer.
func (p TracePacer) Arrival(n int) (time.Duration, bool) {
	if n < 0 || n >= len(p) {
		return 0, true
	}
	return p[n], false
}
