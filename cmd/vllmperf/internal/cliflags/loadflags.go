package cliflags

import (
	"fmt"
	"math"
	"strconv"

	"github.com/vllmperf/vllmperf/internal/request/load"
)

// LoadFlags are a command's load-shape flags (vllmperf run): the loop,
// what bounds it, warm-up and the early stop, over package load's Config.
// Load binds them; Parse checks them and returns the Config they
// describe.
type LoadFlags struct {
	// Config holds the flags' values as they are bound; Parse sets its
	// Rate and Burstiness from RateFlag and BurstinessFlag once checked.
	load.Config
	// Dataset is set when a data set supplies the requests (and a
	// trace its arrivals): the loop and the bound may then be left out.
	Dataset bool
	// RateFlag is --rate as given ("" for none, "inf"); BurstinessFlag
	// is --burstiness (DefaultBurstiness when not given).
	RateFlag       string
	BurstinessFlag float64
	// Shape is the ramp-up and the overload stop.
	Shape ShapeFlags
}

// Parse checks the flags (changed says which were given) and turns them into
// a Config; each error names the flag and the fix.
func (o *LoadFlags) Parse(changed func(name string) bool) (load.Config, error) {
	cfg := o.Config
	cfg.Rate, cfg.Burstiness = 0, 0
	if o.RateFlag != "" {
		r, err := strconv.ParseFloat(o.RateFlag, 64)
		if err != nil || math.IsNaN(r) || r <= 0 {
			return cfg, fmt.Errorf("--rate %q: want a positive number of requests per second, or inf", o.RateFlag)
		}
		cfg.Rate = r
	}
	ramp, err := o.ramp(changed)
	if err != nil {
		return cfg, err
	}
	if cfg.Ramp = ramp; ramp != nil {
		cfg.Rate = 0 // the ramp's; --rate inf is vLLM's default beside it
	}
	if err := o.checkLoop(changed, cfg.Rate, ramp != nil); err != nil {
		return cfg, err
	}
	if err := checkInFlight("--concurrency", o.Concurrency); err != nil {
		return cfg, err
	}
	if err := checkInFlight("--max-concurrency", o.MaxConcurrency); err != nil {
		return cfg, err
	}
	if err := o.checkBounds(changed, cfg.Rate); err != nil {
		return cfg, err
	}
	if cfg.Rate != 0 || ramp != nil {
		cfg.Burstiness = o.BurstinessFlag
	}
	return cfg, nil
}

// checkLoop checks the loop's kind and its shape.
func (o *LoadFlags) checkLoop(set func(string) bool, rate float64, ramp bool) error {
	switch {
	case set("concurrency") && o.Concurrency < 1:
		return fmt.Errorf("--concurrency %d: want at least 1 request in flight", o.Concurrency)
	case o.Concurrency == 0 && rate == 0 && !o.Dataset && !ramp:
		return fmt.Errorf("say how to load the server: --concurrency N (closed loop) or --rate R (open loop)")
	case o.Concurrency != 0 && rate != 0:
		return fmt.Errorf("--concurrency and --rate exclude each other: --concurrency is a closed loop, --rate an open loop (cap it with --max-concurrency)")
	case o.MaxConcurrency < 0:
		return fmt.Errorf("--max-concurrency %d: want a positive cap, or 0 for none", o.MaxConcurrency)
	case o.Concurrency != 0 && o.MaxConcurrency != 0:
		return fmt.Errorf("--max-concurrency caps an open loop (--rate); with --concurrency the loop is already capped")
	case math.IsNaN(o.BurstinessFlag) || o.BurstinessFlag <= 0:
		// vLLM asserts burstiness > 0: a gamma shape of 0 is no distribution.
		return fmt.Errorf("--burstiness %v: want a positive gamma shape (1: Poisson, below 1 burstier, inf: constant rate)", o.BurstinessFlag)
	case set("burstiness") && rate == 0 && !ramp:
		return fmt.Errorf("--burstiness shapes the arrivals of an open loop: use it with --rate, not --concurrency")
	}
	return nil
}

// checkBounds checks what bounds the run, its warm-up and its early stop.
func (o *LoadFlags) checkBounds(set func(string) bool, rate float64) error {
	switch {
	case set("requests") && o.Requests < 1:
		return fmt.Errorf("--requests %d: want at least 1 (leave it out to bound the run by --duration alone)", o.Requests)
	case set("duration") && o.Duration <= 0:
		return fmt.Errorf("--duration %s: want a positive duration such as 30s (leave it out to bound the run by --requests alone)", o.Duration)
	case o.Requests == 0 && o.Duration == 0 && !o.Dataset:
		return fmt.Errorf("bound the run: --requests N (vLLM's --num-prompts) and/or --duration D")
	case math.IsInf(rate, 1) && o.Requests == 0:
		return fmt.Errorf("--rate inf sends every request at once: add --requests N to bound how many")
	case o.Warmup < 0:
		return fmt.Errorf("--warmup %d: want 0 or more", o.Warmup)
	case o.Grace <= 0:
		return fmt.Errorf("--grace %s: want a positive duration (default %s)", o.Grace, load.DefaultGrace)
	case set("grace") && o.Duration == 0:
		return fmt.Errorf("--grace applies after --duration's deadline: add --duration, or drop --grace")
	case o.MaxConsecutiveFailures < 0:
		return fmt.Errorf("--max-consecutive-failures %d: want a positive count, or 0 to never stop early (default %d)", o.MaxConsecutiveFailures, load.DefaultMaxConsecutiveFailures)
	}
	return nil
}

// checkInFlight refuses a loop wider than load.MaxInFlight, naming the
// flag.
func checkInFlight(flag string, n int) error {
	if n > load.MaxInFlight {
		return fmt.Errorf("%s %d: at most %d requests in flight (each holds a connection); lower it", flag, n, load.MaxInFlight)
	}
	return nil
}
