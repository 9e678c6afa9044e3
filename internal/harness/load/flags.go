package load

import (
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/pflag"
)

// Flags are a command's load-shape flags (vllmperf run): the loop, what
// bounds it, warm-up and the early stop. Register binds them; Parse
// checks them and returns the Config they describe.
type Flags struct {
	// Config holds the flags' values as they are bound; Parse sets its
	// Rate and Burstiness from rate and burstiness once checked.
	Config
	// Dataset is set when a data set supplies the requests (and a
	// trace its arrivals): the loop and the bound may then be left out.
	Dataset    bool
	rate       string
	burstiness float64
}

// Register defines the flags on fs, with the CLI's defaults.
func (o *Flags) Register(f *pflag.FlagSet) {
	f.IntVar(&o.Config.Concurrency, "concurrency", 0, "closed loop: keep N requests in flight (N ≥ 1)")
	f.StringVar(&o.rate, "rate", "", "open loop: requests per second (> 0), or \"inf\" to send all at once")
	f.Float64Var(&o.burstiness, "burstiness", DefaultBurstiness, "open loop: gamma shape of arrival gaps, > 0 (1: Poisson; <1 burstier; inf: constant rate)")
	f.IntVar(&o.Config.MaxConcurrency, "max-concurrency", 0, "open loop: cap on requests in flight (0: no cap); waiting on it is client queue time")
	f.IntVar(&o.Config.Requests, "requests", 0, "measured requests to send, ≥ 1 (warm-up comes on top)")
	f.DurationVar(&o.Config.Duration, "duration", 0, "stop dispatching this long after the measured phase starts (> 0)")
	f.DurationVar(&o.Config.Grace, "grace", DefaultGrace, "with --duration: how long in-flight requests may finish after the deadline (> 0)")
	f.IntVar(&o.Config.Warmup, "warmup", 1, "warm-up requests sent first, one at a time, excluded from the statistics (≥ 0; the cold first request is reported on its own)")
	f.Uint64Var(&o.Config.Seed, "seed", 0, "seed for prompt words and arrival times")
	f.IntVar(&o.Config.MaxConsecutiveFailures, "max-consecutive-failures", DefaultMaxConsecutiveFailures, "stop the run after this many requests in a row fail the same way (0: never stop early)")
}

// Parse checks the flags (fs says which were given) and turns them into
// a Config; each error names the flag and the fix.
func (o *Flags) Parse(fs *pflag.FlagSet) (Config, error) {
	cfg := o.Config
	cfg.Rate, cfg.Burstiness = 0, 0
	if o.rate != "" {
		r, err := strconv.ParseFloat(o.rate, 64)
		if err != nil || math.IsNaN(r) || r <= 0 {
			return cfg, fmt.Errorf("--rate %q: want a positive number of requests per second, or inf", o.rate)
		}
		cfg.Rate = r
	}
	if err := o.checkLoop(fs.Changed, cfg.Rate); err != nil {
		return cfg, err
	}
	if err := o.checkBounds(fs.Changed, cfg.Rate); err != nil {
		return cfg, err
	}
	if cfg.Rate != 0 {
		cfg.Burstiness = o.burstiness
	}
	return cfg, nil
}

// checkLoop checks the loop's kind and its shape.
func (o *Flags) checkLoop(set func(string) bool, rate float64) error {
	switch {
	case set("concurrency") && o.Concurrency < 1:
		return fmt.Errorf("--concurrency %d: want at least 1 request in flight", o.Concurrency)
	case o.Concurrency == 0 && rate == 0 && !o.Dataset:
		return fmt.Errorf("say how to load the server: --concurrency N (closed loop) or --rate R (open loop)")
	case o.Concurrency != 0 && rate != 0:
		return fmt.Errorf("--concurrency and --rate exclude each other: --concurrency is a closed loop, --rate an open loop (cap it with --max-concurrency)")
	case o.MaxConcurrency < 0:
		return fmt.Errorf("--max-concurrency %d: want a positive cap, or 0 for none", o.MaxConcurrency)
	case o.Concurrency != 0 && o.MaxConcurrency != 0:
		return fmt.Errorf("--max-concurrency caps an open loop (--rate); with --concurrency the loop is already capped")
	case math.IsNaN(o.burstiness) || o.burstiness <= 0:
		// vLLM asserts burstiness > 0: a gamma shape of 0 is no distribution.
		return fmt.Errorf("--burstiness %v: want a positive gamma shape (1: Poisson, below 1 burstier, inf: constant rate)", o.burstiness)
	case set("burstiness") && rate == 0:
		return fmt.Errorf("--burstiness shapes the arrivals of an open loop: use it with --rate, not --concurrency")
	}
	return nil
}

// checkBounds checks what bounds the run, its warm-up and its early stop.
func (o *Flags) checkBounds(set func(string) bool, rate float64) error {
	switch {
	case set("requests") && o.Requests < 1:
		return fmt.Errorf("--requests %d: want at least 1 (leave it out to bound the run by --duration alone)", o.Requests)
	case set("duration") && o.Duration <= 0:
		return fmt.Errorf("--duration %s: want a positive duration such as 30s (leave it out to bound the run by --requests alone)", o.Duration)
	case o.Requests == 0 && o.Duration == 0 && !o.Dataset:
		return fmt.Errorf("bound the run: --requests N and/or --duration D")
	case math.IsInf(rate, 1) && o.Requests == 0:
		return fmt.Errorf("--rate inf sends every request at once: add --requests N to bound how many")
	case o.Warmup < 0:
		return fmt.Errorf("--warmup %d: want 0 or more", o.Warmup)
	case o.Grace <= 0:
		return fmt.Errorf("--grace %s: want a positive duration (default %s)", o.Grace, DefaultGrace)
	case set("grace") && o.Duration == 0:
		return fmt.Errorf("--grace applies after --duration's deadline: add --duration, or drop --grace")
	case o.MaxConsecutiveFailures < 0:
		return fmt.Errorf("--max-consecutive-failures %d: want a positive count, or 0 to never stop early (default %d)", o.MaxConsecutiveFailures, DefaultMaxConsecutiveFailures)
	}
	return nil
}
