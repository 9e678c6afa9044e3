package load

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/overload"
)

// Defaults applied to zero Config fields.
const (
	// DefaultBurstiness makes open-loop arrivals a Poisson process, as
	// vLLM's --burstiness default of 1.0 does.
	DefaultBurstiness = 1.0
	// DefaultGrace is how long requests still in flight at the Duration
	// deadline may run on before they are canceled.
	DefaultGrace = time.Minute
	// DefaultMaxConsecutiveFailures is the MaxConsecutiveFailures a caller
	// should set unless told otherwise (the CLI's default): a server that
	// fails this many requests in a row the same way is down or refusing the
	// run, and sending the rest measures nothing. The zero Config does not
	// stop early (0 disables the check).
	DefaultMaxConsecutiveFailures = 100
)

// Config describes one run of the load generator. Exactly one of
// Concurrency (closed loop) and Rate (open loop) must be set, and at least
// one of Requests and Duration.
type Config struct {
	// Concurrency runs a closed loop: that many requests are kept in flight,
	// the next one sent as soon as one ends (N workers).
	Concurrency int
	// Rate runs an open loop at this many requests per second, arrivals
	// paced by a GammaPacer; math.Inf(1) sends every request at t=0, as
	// vLLM's --request-rate inf does (Requests is then required).
	Rate float64
	// Arrivals, when set, runs an open loop that replays a trace: measured
	// request k is due Arrivals[k] after the measured phase starts (a
	// dataset.Set's Arrivals, already scaled). Rate and Concurrency must
	// then be 0; Requests defaults to len(Arrivals) and may not exceed it.
	Arrivals []time.Duration
	// Burstiness is the shape of the gamma distribution of open-loop
	// inter-arrival gaps (DefaultBurstiness when 0): 1 is Poisson, lower is
	// burstier, math.Inf(1) is a constant rate. Open loop only.
	Burstiness float64
	// MaxConcurrency caps the requests in flight in an open-loop run (0: no
	// cap), as vLLM's --max-concurrency does. Time a request spends waiting
	// on the cap is client queue time (Sample.QueueTime).
	MaxConcurrency int
	// Requests is how many measured requests to send (0: bounded by
	// Duration only). Warm-up requests come on top.
	Requests int
	// Duration stops dispatch this long after the measured phase starts
	// (0: bounded by Requests only). Requests in flight at the deadline are
	// let finish for Grace, then canceled: Run turns the cancellation the
	// Sender records into sample.ErrGraceExpired, a failure.
	Duration time.Duration
	// Grace is how long requests in flight at the Duration deadline may
	// still run (DefaultGrace when 0). Choose it above the expected E2EL.
	Grace time.Duration
	// Warmup requests are sent first, one at a time, and marked
	// Sample.Warmup so statistics exclude them (whole conversations when
	// Turns > 1).
	Warmup int
	// Turns, above 1, makes every dispatched unit a conversation of Turns
	// requests sent one after another, as a chat client does: turn t goes
	// ThinkTime after turn t−1's reply, with the replies so far as the
	// assistant messages of its history (the Sample.Text of each earlier
	// turn, so the requests must set KeepText). Requests, Warmup,
	// Concurrency and Rate then count and pace conversations; request
	// index i is turn i mod Turns of conversation i / Turns. A turn after
	// a failed one is not sent (sample.ErrPriorTurn). 0 or 1: single
	// requests.
	Turns int
	// ThinkTime is the pause between a reply and the conversation's next
	// turn (Turns > 1).
	ThinkTime time.Duration
	// MaxConsecutiveFailures stops the run early once this many requests
	// in a row, in the order they end, failed with the same error kind and
	// HTTP status (warm-up included): no more requests are sent, those in
	// flight end on their own, and Result.Stop and Result.Streak say why.
	// A success breaks the run of failures; interrupted and grace-cut
	// requests neither count nor break it. 0 never stops early; see
	// DefaultMaxConsecutiveFailures.
	MaxConsecutiveFailures int
	// Ramp, when set, runs an open loop whose rate climbs over Requests
	// (see Ramp); Rate and Concurrency must then be 0 and Requests set.
	Ramp *Ramp
	// Overload, when set, watches an open loop and stops it early, its
	// requests in flight canceled, once the rule finds the server
	// overloaded (Result.Stop is StopOverloaded, Result.Overload says
	// why). A closed loop is never watched. nil: not watched.
	Overload *overload.Rule
	// Misses, when set, stops the run, its requests in flight canceled,
	// once more measured requests missed an SLO than it allows
	// (Result.Stop is StopDecided). nil: never.
	Misses *Misses
	// Seed makes open-loop arrival times reproducible.
	Seed uint64
	// Progress, if set, is called after each request ends (warm-up
	// included) with the number ended so far and the total, Warmup +
	// Requests, or -1 when only Duration bounds the run. Calls are
	// serialized; keep it quick.
	Progress func(done, total int)
}

// Validate reports every problem with c, each naming the fix.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch {
	case c.Concurrency < 0:
		add("Concurrency = %d: must be positive (closed loop) or 0 (use Rate)", c.Concurrency)
	case math.IsNaN(c.Rate) || c.Rate < 0:
		add("Rate = %v: must be positive requests/s, math.Inf(1) for all at once, or 0 (use Concurrency)", c.Rate)
	case c.Concurrency > 0 && c.Rate != 0:
		add("Concurrency = %d and Rate = %v both set: set Concurrency for a closed loop or Rate for an open loop, not both", c.Concurrency, c.Rate)
	case c.Arrivals != nil && (c.Concurrency > 0 || c.Rate != 0):
		add("Arrivals (a trace) with Concurrency = %d or Rate = %v: a trace sets its own pace; drop them", c.Concurrency, c.Rate)
	case c.Ramp != nil && (c.Concurrency > 0 || c.Rate != 0 || c.Arrivals != nil):
		add("Ramp with Concurrency = %d, Rate = %v or Arrivals: a ramp sets its own rate; drop them", c.Concurrency, c.Rate)
	case c.Concurrency == 0 && c.Rate == 0 && c.Arrivals == nil && c.Ramp == nil:
		add("neither Concurrency nor Rate set: set Concurrency (closed loop) or Rate (open loop)")
	}
	c.validateArrivals(add)
	c.validateWatch(add)
	if c.Turns < 0 || c.ThinkTime < 0 {
		add("Turns = %d, ThinkTime = %v: want 0 or more", c.Turns, c.ThinkTime)
	}
	if c.Turns > 1 && c.Arrivals != nil {
		add("Turns = %d with Arrivals: a trace's requests are single turns", c.Turns)
	}
	if c.ThinkTime > 0 && c.Turns < 2 {
		add("ThinkTime = %v without conversations: set Turns above 1", c.ThinkTime)
	}
	if math.IsNaN(c.Burstiness) || c.Burstiness < 0 {
		add("Burstiness = %v: must be positive (1 = Poisson) or 0 for the default %v", c.Burstiness, DefaultBurstiness)
	} else if c.Burstiness != 0 && c.Concurrency > 0 {
		add("Burstiness = %v with Concurrency: burstiness shapes open-loop arrivals; set Rate instead of Concurrency or drop Burstiness", c.Burstiness)
	}
	if c.MaxConcurrency < 0 {
		add("MaxConcurrency = %d: must be positive or 0 (no cap)", c.MaxConcurrency)
	} else if c.MaxConcurrency > 0 && c.Concurrency > 0 {
		add("MaxConcurrency = %d with Concurrency: the cap applies to open-loop runs; a closed loop is already capped by Concurrency", c.MaxConcurrency)
	}
	if c.Concurrency > MaxInFlight || c.MaxConcurrency > MaxInFlight {
		add("Concurrency = %d, MaxConcurrency = %d: at most MaxInFlight (%d) requests in flight", c.Concurrency, c.MaxConcurrency, MaxInFlight)
	}
	if c.Requests < 0 {
		add("Requests = %d: must be positive or 0 (bounded by Duration)", c.Requests)
	}
	if c.Duration < 0 {
		add("Duration = %v: must be positive or 0 (bounded by Requests)", c.Duration)
	}
	if c.Requests == 0 && c.Duration == 0 && c.Arrivals == nil {
		add("neither Requests nor Duration set: set Requests and/or Duration to bound the run")
	}
	if math.IsInf(c.Rate, 1) && c.Requests == 0 {
		add("Rate = +Inf sends every request at once: set Requests to bound how many")
	}
	if c.Grace < 0 {
		add("Grace = %v: must be positive or 0 for the default %v", c.Grace, DefaultGrace)
	}
	if c.Warmup < 0 {
		add("Warmup = %d: must be 0 or positive", c.Warmup)
	}
	if c.MaxConsecutiveFailures < 0 {
		add("MaxConsecutiveFailures = %d: must be positive, or 0 to never stop early (DefaultMaxConsecutiveFailures is %d)", c.MaxConsecutiveFailures, DefaultMaxConsecutiveFailures)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("load: invalid config: %w", err)
	}
	return nil
}

// validateArrivals checks a trace's schedule.
func (c Config) validateArrivals(add func(string, ...any)) {
	if c.Arrivals == nil {
		return
	}
	if len(c.Arrivals) == 0 {
		add("Arrivals is empty: a trace needs at least one request")
	}
	if c.Requests > len(c.Arrivals) {
		add("Requests = %d but the trace has %d arrivals: lower Requests (0 sends the whole trace)", c.Requests, len(c.Arrivals))
	}
	if c.Burstiness != 0 {
		add("Burstiness = %v with Arrivals: a trace's gaps are its own", c.Burstiness)
	}
	for k, at := range c.Arrivals {
		if at < 0 || (k > 0 && at < c.Arrivals[k-1]) {
			add("Arrivals[%d] = %v: arrivals must be ≥ 0 and in order", k, at)
			return
		}
	}
}

func (c Config) withDefaults() Config {
	c.Turns = max(c.Turns, 1)
	if c.Arrivals != nil && c.Requests == 0 {
		c.Requests = len(c.Arrivals)
	}
	if c.Burstiness == 0 {
		c.Burstiness = DefaultBurstiness
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	return c
}

// openLoop reports whether the run is paced by Rate.
func (c Config) openLoop() bool { return c.Rate > 0 || c.Arrivals != nil || c.Ramp != nil }

// validateWatch checks the ramp and the overload rule.
func (c Config) validateWatch(add func(string, ...any)) {
	if c.Ramp != nil {
		if err := c.Ramp.Validate(); err != nil {
			add("Ramp: %v", err)
		}
		if c.Requests == 0 {
			add("Ramp without Requests: a ramp climbs over a request count; set Requests")
		}
	}
	if c.Misses != nil && c.Misses.Allowed < 0 {
		add("Misses.Allowed = %d: want 0 or more", c.Misses.Allowed)
	}
	if c.Overload != nil {
		if err := c.Overload.Validate(); err != nil {
			add("Overload: %v", err)
		}
	}
}
