package cliflags

import (
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/request/load"
)

// ShapeFlags are the load-shape flags beyond a fixed rate: vLLM's ramp-up
// (--ramp-up-strategy, --ramp-up-start-rps, --ramp-up-end-rps) and the
// overload stop's switch (--no-overload-stop).
type ShapeFlags struct {
	RampStrategy       string
	RampStart, RampEnd float64
	NoOverloadStop     bool
}

// ramp checks the ramp-up flags as vLLM's main_async does (changed says
// which were given) and returns the Ramp they describe, nil without
// --ramp-up-strategy.
func (o *LoadFlags) ramp(set func(string) bool) (*load.Ramp, error) {
	s := o.Shape
	if s.RampStrategy == "" {
		if set("ramp-up-start-rps") || set("ramp-up-end-rps") {
			return nil, fmt.Errorf("--ramp-up-start-rps and --ramp-up-end-rps go with --ramp-up-strategy linear or exponential: add it")
		}
		return nil, nil
	}
	switch {
	case o.RateFlag != "" && !strings.EqualFold(o.RateFlag, "inf"):
		// vLLM refuses a finite --request-rate with a ramp; inf is its default.
		return nil, fmt.Errorf("--ramp-up-strategy sets the request rate itself, from --ramp-up-start-rps to --ramp-up-end-rps: drop --rate")
	case o.Concurrency != 0:
		return nil, fmt.Errorf("--ramp-up-strategy ramps an open loop's rate: drop --concurrency (cap the requests in flight with --max-concurrency)")
	case !set("ramp-up-start-rps") || !set("ramp-up-end-rps"):
		return nil, fmt.Errorf("--ramp-up-strategy %s needs both --ramp-up-start-rps and --ramp-up-end-rps", s.RampStrategy)
	case o.Requests == 0:
		return nil, fmt.Errorf("--ramp-up-strategy climbs over the run's requests: add --requests N")
	}
	r := &load.Ramp{Strategy: load.RampStrategy(s.RampStrategy), StartRPS: s.RampStart, EndRPS: s.RampEnd}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("--ramp-up-strategy %s --ramp-up-start-rps %v --ramp-up-end-rps %v: %w", s.RampStrategy, s.RampStart, s.RampEnd, err)
	}
	return r, nil
}
