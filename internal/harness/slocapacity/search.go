// Package slocapacity finds the capacity of a deployment under an SLO: the
// highest request rate (open loop, Poisson arrivals) or concurrency (closed
// loop) at which the share of requests meeting thresholds.yaml's goodput:
// SLO stays at or above capacity.goodput_min (99%). It is the figure teams
// ask for first, "how much load can this deployment take within our SLO",
// measured rather than read off a fixed sweep.
//
// The search brackets, then bisects: it runs the load at a start level and
// doubles it while runs pass (halves it while they fail) until one passes
// and one fails, then runs the geometric mean of the two until the lowest
// failing level is within capacity.tolerance (10%) of the highest passing
// one, in at most capacity.max_runs (12) runs. It assumes that a run that
// passes at a level would pass at every lower one; noise at the boundary
// can break that, which is why every run is long (Sizing) and every run is
// kept in the Result to be read.
//
// Search is the algorithm over any Probe; Runner is the Probe that runs
// harness.Run on a server. `vllmperf capacity` and the suite's capacity
// scenarios (summary=capacity) both use them; Result.Metrics gives the
// gated unit slo-capacity-req/s (or slo-capacity-conc).
package slocapacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/vllmperf/vllmperf/internal/harness/stats"
	"github.com/vllmperf/vllmperf/internal/harness/thresholds"
	"github.com/vllmperf/vllmperf/internal/harness/units"
)

// Mode is what the search varies.
type Mode string

// The modes.
const (
	// Rate varies the request rate of an open loop with Poisson arrivals:
	// users arrive whatever the server's speed.
	Rate Mode = "rate"
	// Concurrency varies the requests kept in flight by a closed loop.
	Concurrency Mode = "concurrency"
)

// ParseMode reads "rate" or "concurrency".
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Rate, Concurrency:
		return m, nil
	}
	return "", fmt.Errorf("%q: want rate (open loop, requests/s) or concurrency (closed loop, requests in flight)", s)
}

// Trial is one run of the search at one level.
type Trial struct {
	// Level is the request rate (req/s) or the concurrency of the run.
	Level float64
	// Requests are the measured requests that ended (completed or failed),
	// Good those that completed within the goodput SLO.
	Requests, Good int
	// TTFTP99 and TPOTP99 are the run's P99s in milliseconds; HasP99 is
	// false when no request completed.
	TTFTP99, TPOTP99 float64
	HasP99           bool
	// ReqPerSec is the completed requests per second; Users the requests
	// in flight on average (the concurrency, or Little's law: completed
	// requests/s × mean E2EL).
	ReqPerSec, Users float64
	// Duration is the measured phase's length.
	Duration time.Duration
	// Pass says whether GoodputPct ≥ the search's goodput minimum.
	Pass bool
	// Notes are what makes the run's figure less trustworthy (too few
	// requests, requests long against the run).
	Notes []string
}

// GoodputPct is the share of Requests that met the SLO, in percent (0
// without requests).
func (t Trial) GoodputPct() float64 {
	if t.Requests == 0 {
		return 0
	}
	return 100 * float64(t.Good) / float64(t.Requests)
}

// Probe runs the load at one level and returns what it measured; an error
// stops the search (the server went down, the context ended).
type Probe func(ctx context.Context, level float64) (Trial, error)

// Config is how one search runs.
type Config struct {
	Mode Mode
	// Start is the first level run (req/s, or requests in flight).
	Start float64
	// Capacity holds the goodput minimum, the tolerance and the run budget
	// (thresholds.yaml's capacity:).
	Capacity thresholds.Capacity
	// SLO is the per-request goodput SLO the probe measures against; it
	// is stated with the result.
	SLO stats.SLO
}

// Validate reports every problem with c, each naming the fix.
func (c Config) Validate() error {
	var errs []error
	if _, err := ParseMode(string(c.Mode)); err != nil {
		errs = append(errs, fmt.Errorf("mode %w", err))
	}
	if !(c.Start > 0) || math.IsInf(c.Start, 0) || (c.Mode == Concurrency && c.Start != math.Trunc(c.Start)) {
		errs = append(errs, fmt.Errorf("start %v: want a positive request rate, or a whole number of requests in flight", c.Start))
	}
	if k := c.Capacity; !(k.GoodputMin > 0 && k.GoodputMin <= 1) {
		errs = append(errs, fmt.Errorf("goodput minimum %v: want a share above 0%% and at most 100%% (thresholds.yaml capacity.goodput_min)", k.GoodputMin))
	}
	if k := c.Capacity; !(k.Tolerance > 0) {
		errs = append(errs, fmt.Errorf("tolerance %v: want a positive share such as 10%% (thresholds.yaml capacity.tolerance)", k.Tolerance))
	}
	if c.Capacity.MaxRuns < 2 {
		errs = append(errs, fmt.Errorf("max runs %d: want at least 2, one passing and one failing run", c.Capacity.MaxRuns))
	}
	if !c.SLO.Set() {
		errs = append(errs, errors.New("no goodput SLO: set thresholds.yaml's goodput: (ttft, tpot or e2el)"))
	}
	return errors.Join(errs...)
}

// Result is a search's outcome with every run behind it.
type Result struct {
	Config Config
	// Trials are the runs in the order they ran.
	Trials []Trial
	// Pass is the passing run at the highest level, Fail the failing run at
	// the lowest; either is nil when no run came out that way.
	Pass, Fail *Trial
	// Found is set when Pass and Fail are within the tolerance: Pass.Level
	// is then the capacity.
	Found bool
	// Reason says why the capacity was not found (empty when Found).
	Reason string
}

// Search runs probe at levels chosen by bracketing, then bisection, until
// the capacity is found or the run budget is spent. Its error is the
// probe's (the result so far comes with it) or a bad config.
func Search(ctx context.Context, cfg Config, probe Probe) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Result{Config: cfg}
	level := cfg.round(cfg.Start)
	for len(r.Trials) < cfg.Capacity.MaxRuns {
		t, err := probe(ctx, level)
		if err != nil {
			r.Reason = fmt.Sprintf("stopped at %s: %v", cfg.FormatLevel(level), err)
			return r, fmt.Errorf("capacity search at %s: %w", cfg.FormatLevel(level), err)
		}
		t.Level = level
		t.Pass = cfg.Passes(t)
		r.add(t)
		next, done := r.next()
		if done {
			break
		}
		level = next
	}
	r.conclude()
	return r, nil
}

// Passes reports whether t meets the goodput minimum: at least
// GoodputMin of its requests met the SLO (a run without requests fails).
func (c Config) Passes(t Trial) bool {
	return t.Requests > 0 && float64(t.Good) >= c.Capacity.GoodputMin*float64(t.Requests)-1e-9
}

// add records t and moves the bracket.
func (r *Result) add(t Trial) {
	r.Trials = append(r.Trials, t)
	// The slice may have moved: point Pass and Fail at its elements again.
	r.Pass, r.Fail = nil, nil
	for i := range r.Trials {
		tr := &r.Trials[i]
		if tr.Pass && (r.Pass == nil || tr.Level > r.Pass.Level) {
			r.Pass = tr
		}
		if !tr.Pass && (r.Fail == nil || tr.Level < r.Fail.Level) {
			r.Fail = tr
		}
	}
}

// next is the level to run next: double above a pass, halve below a
// fail, else the geometric mean of the bracket; done when the bracket is
// within the tolerance or no new level is left to run.
func (r *Result) next() (level float64, done bool) {
	c := r.Config
	switch {
	case r.Fail == nil:
		level = c.round(2 * r.Pass.Level)
	case r.Pass == nil:
		level = c.round(r.Fail.Level / 2)
		if c.Mode == Concurrency && r.Fail.Level <= 1 {
			return 0, true // even one request in flight fails
		}
	default:
		if r.within() {
			return 0, true
		}
		level = c.round(math.Sqrt(r.Pass.Level * r.Fail.Level))
		if level <= r.Pass.Level || level >= r.Fail.Level {
			return 0, true // neighbouring concurrencies: nothing lies between
		}
	}
	return level, false
}

// within reports whether the bracket is within the tolerance (or two
// neighbouring concurrencies). Levels are only ever run inside the
// bracket, so Fail lies above Pass.
func (r *Result) within() bool {
	if r.Pass == nil || r.Fail == nil {
		return false
	}
	if r.Config.Mode == Concurrency && r.Fail.Level-r.Pass.Level <= 1 {
		return true
	}
	return r.Fail.Level <= r.Pass.Level*(1+r.Config.Capacity.Tolerance)+1e-9
}

// conclude sets Found, or the Reason it was not.
func (r *Result) conclude() {
	c := r.Config
	switch {
	case r.within():
		r.Found = true
	case r.Pass == nil && r.Fail != nil && c.Mode == Concurrency && r.Fail.Level <= 1:
		r.Reason = "the SLO fails even with one request in flight: the SLO is out of this deployment's reach"
	case r.Pass == nil:
		r.Reason = fmt.Sprintf("every run failed the SLO, down to %s, in %d runs: lower the start or raise the run budget (capacity.max_runs)", c.FormatLevel(r.Fail.Level), len(r.Trials))
	case r.Fail == nil:
		r.Reason = fmt.Sprintf("every run met the SLO, up to %s, in %d runs: raise the start or the run budget (capacity.max_runs)", c.FormatLevel(r.Pass.Level), len(r.Trials))
	default:
		r.Reason = fmt.Sprintf("%s passes and %s fails, %.0f%% apart, after %d runs (tolerance %.0f%%): raise the run budget (capacity.max_runs)",
			c.FormatLevel(r.Pass.Level), c.FormatLevel(r.Fail.Level), 100*(r.Fail.Level/r.Pass.Level-1), len(r.Trials), 100*c.Capacity.Tolerance)
	}
}

// round makes a level runnable: a whole concurrency of at least 1, or a
// rate to three significant digits, whole from 100 up (names and tables
// stay readable).
func (c Config) round(level float64) float64 {
	if c.Mode == Concurrency {
		return max(1, math.Round(level))
	}
	if level >= 100 {
		return math.Round(level)
	}
	v, _ := strconv.ParseFloat(strconv.FormatFloat(level, 'g', 3, 64), 64)
	return v
}

// FormatLevel writes a level with its unit: "12.5 req/s", "8 in flight".
func (c Config) FormatLevel(level float64) string {
	if c.Mode == Concurrency {
		return strconv.FormatFloat(level, 'f', 0, 64) + " in flight"
	}
	return strconv.FormatFloat(level, 'g', -1, 64) + " " + units.Label(units.ReqPerSec)
}
