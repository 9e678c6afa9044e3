// Package capacity finds the capacity of a deployment under an SLO: the
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
// one, then runs those two levels once more: a level counts as passing only
// when every run at it passed, so a repeat that disagrees widens the
// bracket, and the search goes on. When the first run fails, the next
// runs about one request in flight (concurrency 1, or the rate Little's
// law gives from the failing run): no queue can form there, so when that
// fails too the SLO is out of reach at any load, and the search stops
// saying so; when it passes, the two bracket the capacity. Its budget is capacity.max_runs (14)
// runs and capacity.max_time (30 minutes; no run starts after it), each
// run at most capacity.max_run (Sizing). It assumes that a run that passes
// at a level would pass at every lower one; noise at the boundary can
// break that, which is why every run is long, the boundary is run twice,
// goodput comes with its interval and a result the runs cannot tell from
// its neighbour is flagged borderline.
//
// Search is the algorithm over any Probe; Runner is the Probe that runs
// pipeline.Run on a server. `vllmperf capacity` and the suite's capacity
// scenarios (summary=capacity) both use them; Result.Metrics gives the
// gated unit slo-capacity-req/s (or slo-capacity-conc).
package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
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
	// WaitingPeak is the most requests the server's queue held during the
	// run (vllm:num_requests_waiting); HasWaiting is false when the server
	// does not expose it.
	WaitingPeak float64
	HasWaiting  bool
	// Duration is the measured phase's length.
	Duration time.Duration
	// Pace is the requests the server completed per second once it had
	// filled, when the overload rule stopped the run (the verdict's pace;
	// 0 for any other run): about the most it completes, so no higher rate
	// can be its capacity.
	Pace float64
	// Stopped says why the run stopped before its end, its verdict
	// already certain: the overload rule found the server overloaded, or
	// more requests missed the SLO than a passing run allows ("" when it
	// ran to its end). Such a run fails, whatever its goodput.
	Stopped string
	// Pass says whether GoodputPct ≥ the search's goodput minimum.
	Pass bool
	// Notes are what makes the run's figure less trustworthy (too few
	// requests, requests long against the run).
	Notes []string
}

// Verdict is the trial's word in the progress lines and the table:
// verdict.Pass or verdict.Fail.
func (t Trial) Verdict() verdict.Status {
	if t.Pass {
		return verdict.Pass
	}
	return verdict.Fail
}

// GoodputPct is the share of Requests that met the SLO, in percent (0
// without requests).
func (t Trial) GoodputPct() float64 {
	if t.Requests == 0 {
		return 0
	}
	return 100 * float64(t.Good) / float64(t.Requests)
}

// NoQueue reports whether the server's queue stayed empty through the run
// (false when the server does not say).
func (t Trial) NoQueue() bool { return t.HasWaiting && t.WaitingPeak == 0 }

// Probe runs the load at one level and returns what it measured; an error
// stops the search (the server went down, the context ended).
type Probe func(ctx context.Context, level float64) (Trial, error)

// Config is how one search runs.
type Config struct {
	Mode Mode
	// Start is the first level run (req/s, or requests in flight).
	Start float64
	// Capacity holds the goodput minimum, the tolerance and the budget
	// (thresholds.yaml's capacity:).
	Capacity thresholds.Capacity
	// SLO is the per-request goodput SLO the probe measures against; it
	// is stated with the result.
	SLO stats.SLO
	// Now is the clock of the time budget (time.Now when nil).
	Now func() time.Time
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
	if c.Capacity.MaxTime <= 0 {
		errs = append(errs, fmt.Errorf("time budget %v: want a positive duration such as 30m (thresholds.yaml capacity.max_time)", c.Capacity.MaxTime))
	}
	if c.Capacity.MaxRun <= 0 {
		errs = append(errs, fmt.Errorf("run length %v: want a positive duration such as 2m (thresholds.yaml capacity.max_run)", c.Capacity.MaxRun))
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
	// Pass is the last run at the highest level below Fail whose runs all
	// passed; Fail the first failing run at the lowest level where a run
	// failed. Either is nil when no run came out that way.
	Pass, Fail *Trial
	// Found is set when Pass and Fail are within the tolerance and both
	// levels ran twice: Pass.Level is then the capacity.
	Found bool
	// OutOfReach is set when the SLO failed at about one request in
	// flight (so without a queue): no load meets it.
	OutOfReach bool
	// Borderline says why a found capacity is close to a coin flip (the
	// goodput intervals of its two levels overlap, or a level's runs
	// disagreed); empty when it is not.
	Borderline string
	// Reason says why the capacity was not found (empty when Found).
	Reason string
	// Elapsed is the search's wall time; OutOfTime says the time budget
	// stopped it.
	Elapsed   time.Duration
	OutOfTime bool
	// oneUser is the level run at about one request in flight after the
	// first failing run (0 when none was).
	oneUser float64
	// belowPace is the level run below an overloaded first failing run's
	// pace (0 when none was).
	belowPace float64
}

// Search runs probe at levels chosen by bracketing, then bisection, then
// a repeat of the boundary, until the capacity is found, the SLO is out
// of reach, or the budget (runs, time) is spent. Its error is the probe's
// (the result so far comes with it) or a bad config.
func Search(ctx context.Context, cfg Config, probe Probe) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	began := now()
	r := &Result{Config: cfg}
	level := cfg.round(cfg.Start)
	for len(r.Trials) < cfg.Capacity.MaxRuns {
		if r.Elapsed = now().Sub(began); r.Elapsed >= cfg.Capacity.MaxTime {
			r.OutOfTime = true
			break
		}
		t, err := probe(ctx, level)
		r.Elapsed = now().Sub(began)
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
// GoodputMin of its requests met the SLO (a run without requests, or one
// stopped early on its verdict, fails).
func (c Config) Passes(t Trial) bool {
	return t.Requests > 0 && t.Stopped == "" && float64(t.Good) >= c.Capacity.GoodputMin*float64(t.Requests)-1e-9
}

// add records t and moves the bracket: Fail to the lowest level where a
// run failed, Pass to the highest level below it where every run passed.
func (r *Result) add(t Trial) {
	r.Trials = append(r.Trials, t)
	// The slice may have moved: point Pass and Fail at its elements again.
	r.Pass, r.Fail = nil, nil
	for i := range r.Trials {
		if tr := &r.Trials[i]; !tr.Pass && (r.Fail == nil || tr.Level < r.Fail.Level) {
			r.Fail = tr
		}
	}
	for i := range r.Trials {
		tr := &r.Trials[i]
		if r.Fail != nil && tr.Level >= r.Fail.Level {
			continue
		}
		if r.Pass == nil || tr.Level >= r.Pass.Level {
			r.Pass = tr
		}
	}
}

// runsAt counts the runs at level.
func (r *Result) runsAt(level float64) int {
	n := 0
	for _, t := range r.Trials {
		if t.Level == level {
			n++
		}
	}
	return n
}

// next is the level to run next: double above a pass; below the first
// fail with nothing passed, just under its pace when the overload rule
// stopped it with its requests within the SLO (belowPaceLevel), else (or
// when that fails too) about one request in flight (or half the level
// when the run completed no request to tell the users in flight from); else the geometric mean of the bracket, and once the bracket is
// within the tolerance each of its levels once more. Done when both ran
// twice, the SLO is out of reach, or no new level is left to run.
func (r *Result) next() (level float64, done bool) {
	c := r.Config
	switch {
	case r.Fail == nil:
		level = c.round(2 * r.Pass.Level)
	case r.Pass == nil:
		if r.outOfReach() {
			return 0, true
		}
		if l, ok := r.belowPaceLevel(); ok {
			r.belowPace = l
			return l, false
		}
		if r.oneUser == 0 {
			if one, ok := r.oneUserLevel(*r.Fail); ok {
				r.oneUser = one
				if one >= r.Fail.Level { // it ran at one request in flight already
					return 0, true
				}
				return one, false
			}
		}
		level = c.round(r.Fail.Level / 2)
		if c.Mode == Concurrency && r.Fail.Level <= 1 {
			return 0, true // even one request in flight fails
		}
	default:
		if r.within() {
			for _, l := range []float64{r.Pass.Level, r.Fail.Level} {
				if r.runsAt(l) < 2 {
					return l, false // the boundary, once more
				}
			}
			return 0, true
		}
		level = c.round(math.Sqrt(r.Pass.Level * r.Fail.Level))
		if level <= r.Pass.Level || level >= r.Fail.Level {
			return 0, true // neighbouring concurrencies: nothing lies between
		}
	}
	return level, false
}

// belowPaceLevel is the level to run after a first failing run that the
// overload rule stopped while the requests it measured met the SLO: the
// server fell behind the rate, not the SLO, so the SLO is within reach at
// a lower load, and its pace bounds the capacity from above. The level is
// that pace less the search's tolerance (pace ÷ (1 + tolerance)), where a
// queue no longer grows; run once, in rate mode, and only below the
// failing level. When it fails too, the search goes on down to about one
// request in flight, as after any first failure.
func (r *Result) belowPaceLevel() (float64, bool) {
	c, f := r.Config, r.Fail
	if c.Mode != Rate || r.belowPace > 0 || r.oneUser > 0 || !(f.Pace > 0) {
		return 0, false
	}
	if f.Requests == 0 || float64(f.Good) < c.Capacity.GoodputMin*float64(f.Requests)-1e-9 {
		return 0, false // requests missed the SLO: whether any load meets it comes first
	}
	l := c.round(f.Pace / (1 + c.Capacity.Tolerance))
	if !(l > 0) || l >= f.Level {
		return 0, false
	}
	return l, true
}

// oneUserLevel is the level at which about one request is in flight:
// concurrency 1, or the rate that Little's law gives from a run's users
// (level / users); false when the run completed no request to tell.
func (r *Result) oneUserLevel(t Trial) (float64, bool) {
	if r.Config.Mode == Concurrency {
		return 1, true
	}
	if !(t.Users > 0) {
		return 0, false
	}
	return r.Config.round(t.Level / max(t.Users, 1)), true
}

// outOfReach reports whether the SLO failed at about one request in
// flight with nothing passing: concurrency 1, or the rate the first
// failing run pointed to.
func (r *Result) outOfReach() bool {
	if r.Pass != nil || r.Fail == nil {
		return false
	}
	if r.Config.Mode == Concurrency && r.Fail.Level <= 1 {
		return true
	}
	return r.oneUser > 0 && r.Fail.Level <= r.oneUser
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

// conclude sets Found (and Borderline), OutOfReach, or the Reason the
// capacity was not found.
func (r *Result) conclude() {
	c := r.Config
	raise := "raise the run budget (capacity.max_runs, --max-runs)"
	if r.OutOfTime {
		raise = "raise the time budget (capacity.max_time, --max-time)"
	}
	switch {
	case r.outOfReach():
		r.OutOfReach = true
		r.Reason = r.outOfReachReason()
	case r.within() && r.runsAt(r.Pass.Level) >= 2 && r.runsAt(r.Fail.Level) >= 2:
		r.Found = true
		r.Borderline = r.borderline()
	case r.within():
		r.Reason = fmt.Sprintf("%s passes and %s fails, within %.0f%%, but the budget ran out before both ran a second time: %s",
			c.FormatLevel(r.Pass.Level), c.FormatLevel(r.Fail.Level), 100*c.Capacity.Tolerance, raise)
	case r.Pass == nil && r.Fail == nil:
		r.Reason = fmt.Sprintf("no run: %s", raise)
	case r.Pass == nil:
		r.Reason = fmt.Sprintf("every run failed the SLO, down to %s, in %d runs: lower the start or %s", c.FormatLevel(r.Fail.Level), len(r.Trials), raise)
	case r.Fail == nil:
		r.Reason = fmt.Sprintf("every run met the SLO, up to %s, in %d runs: raise the start or %s", c.FormatLevel(r.Pass.Level), len(r.Trials), raise)
	default:
		r.Reason = fmt.Sprintf("%s passes and %s fails, %.0f%% apart, after %d runs (tolerance %.0f%%): %s",
			c.FormatLevel(r.Pass.Level), c.FormatLevel(r.Fail.Level), 100*(r.Fail.Level/r.Pass.Level-1), len(r.Trials), 100*c.Capacity.Tolerance, raise)
	}
	if !r.Found {
		r.Reason += " (" + r.Budget() + ")"
	}
}

// outOfReachReason is the sentence of an SLO no load meets: the run at
// about one request in flight failed it, with the server's queue as it
// was then.
func (r *Result) outOfReachReason() string {
	c, f := r.Config, r.Fail
	at := c.FormatLevel(f.Level)
	if c.Mode == Rate {
		at += ", about one request in flight"
	}
	switch {
	case f.NoQueue():
		at += ", with no request waiting in the server's queue"
	case f.HasWaiting:
		at += ", the server's queue peaking at " + num(f.WaitingPeak)
	}
	s := fmt.Sprintf("the SLO (%s) is out of reach at any load: even at %s, only %.1f%% of requests met it", r.SLOText(), at, f.GoodputPct())
	if first := r.Trials[0]; first.Level != f.Level {
		s += fmt.Sprintf(", and %.1f%% at %s", first.GoodputPct(), c.FormatLevel(first.Level))
	}
	return s
}

// borderline says why a found capacity is close to a coin flip: a level
// of the bracket whose runs disagreed, or goodput intervals (95%, over
// each level's runs) of the passing and the failing level that overlap,
// so the runs cannot tell the two apart. Empty when neither.
func (r *Result) borderline() string {
	c := r.Config
	var why []string
	for _, l := range []float64{r.Pass.Level, r.Fail.Level} {
		passed, failed := 0, 0
		for _, t := range r.Trials {
			if t.Level == l && t.Pass {
				passed++
			} else if t.Level == l {
				failed++
			}
		}
		if passed > 0 && failed > 0 {
			why = append(why, fmt.Sprintf("its runs at %s disagreed (%d passed, %d failed)", c.FormatLevel(l), passed, failed))
		}
	}
	p, f := r.LevelGoodput(r.Pass.Level), r.LevelGoodput(r.Fail.Level)
	if p.Low <= f.High {
		why = append(why, fmt.Sprintf("the goodput intervals at %s (%s) and %s (%s) overlap", c.FormatLevel(r.Pass.Level), p.Range(), c.FormatLevel(r.Fail.Level), f.Range()))
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, "; ") + ": longer runs (--size full) would tell the levels apart"
}

// Budget states the budget beside what the search used: "9 runs of at
// most 14, 3m12s of the 30m time budget".
func (r *Result) Budget() string {
	return fmt.Sprintf("%d runs of at most %d, %s of the %s time budget", len(r.Trials), r.Config.Capacity.MaxRuns,
		duration(r.Elapsed), duration(r.Config.Capacity.MaxTime))
}

// duration writes d to the second, without a trailing zero unit: "30m",
// "2m5s", "1h30m".
func duration(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
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
