package load

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// RampStrategy is how a ramp-up walks the request rate from its start to
// its end, as vLLM's `vllm bench serve --ramp-up-strategy` does.
type RampStrategy string

// The strategies vLLM offers.
const (
	// RampLinear: the rate of request i of N is start + (end − start)·i/(N−1).
	RampLinear RampStrategy = "linear"
	// RampExponential: the rate of request i of N is start·(end/start)^(i/(N−1)).
	RampExponential RampStrategy = "exponential"
)

// Ramp is an open loop whose offered rate climbs from StartRPS to EndRPS
// over the run's Requests, request by request, following vLLM's
// get_current_request_rate (vllm/benchmarks/serve.py, checked against
// vLLM main of 2025-11): request i's gap is drawn, with the run's
// burstiness, at request i's rate. Unlike vLLM, request 0 is due at once
// (as GammaPacer's is) and a start of 0 is refused (vLLM divides by it).
type Ramp struct {
	Strategy         RampStrategy
	StartRPS, EndRPS float64
}

// Validate checks the ramp as vLLM's main_async does, each error naming the
// fix in the CLI's words.
func (r Ramp) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r.Strategy != RampLinear && r.Strategy != RampExponential {
		add("ramp-up strategy %q: want linear or exponential", r.Strategy)
	}
	if !(r.StartRPS > 0) || math.IsInf(r.StartRPS, 0) {
		add("ramp-up start %v req/s: want a positive, finite rate (a rate of 0 sends nothing)", r.StartRPS)
	}
	if !(r.EndRPS > 0) || math.IsInf(r.EndRPS, 0) {
		add("ramp-up end %v req/s: want a positive, finite rate", r.EndRPS)
	}
	if r.StartRPS > r.EndRPS {
		add("ramp-up start %v req/s above its end %v req/s: the ramp climbs; swap them", r.StartRPS, r.EndRPS)
	}
	return errors.Join(errs...)
}

// RateAt is the rate offered to request i of n (0-based).
func (r Ramp) RateAt(i, n int) float64 {
	progress := float64(i) / float64(max(n-1, 1))
	if r.Strategy == RampExponential {
		return r.StartRPS * math.Pow(r.EndRPS/r.StartRPS, progress)
	}
	return r.StartRPS + (r.EndRPS-r.StartRPS)*progress
}

// RampPacer is the Pacer of a Ramp over n requests: deterministic from its
// seed, not safe for concurrent use.
type RampPacer struct {
	ramp  Ramp
	n     int
	shape float64
	rng   *rand.Rand
	at    []float64
}

// NewRampPacer returns the pacer of ramp over n requests with the given
// burstiness (1: Poisson; math.Inf(1): constant gaps).
func NewRampPacer(ramp Ramp, n int, burstiness float64, seed uint64) (*RampPacer, error) {
	if err := ramp.Validate(); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if n < 1 {
		return nil, fmt.Errorf("load: ramp over %d requests: a ramp needs a request count (Requests) to climb over", n)
	}
	if math.IsNaN(burstiness) || burstiness <= 0 {
		return nil, fmt.Errorf("load: pacer burstiness = %v: must be positive (1 = Poisson) or +Inf (constant rate)", burstiness)
	}
	return &RampPacer{ramp: ramp, n: n, shape: burstiness, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), at: []float64{0}}, nil
}

// Arrival implements Pacer: there is none after request n−1.
func (p *RampPacer) Arrival(k int) (time.Duration, bool) {
	if k < 0 || k >= p.n {
		return 0, true
	}
	for len(p.at) <= k {
		j := len(p.at)
		rate := p.ramp.RateAt(j, p.n)
		gap := 1 / rate
		if !math.IsInf(p.shape, 1) {
			gap = gammaRand(p.rng, p.shape) / (rate * p.shape)
		}
		p.at = append(p.at, p.at[j-1]+gap)
	}
	return time.Duration(p.at[k] * float64(time.Second)), false
}
