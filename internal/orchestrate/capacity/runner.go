package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// DefaultMinRequests is the fewest measured requests a run should have:
// at 100, one request is 1%, so a 99% goodput can be told from 100%, and
// the P99s rest on the 100 samples package stats asks of a P99.
const DefaultMinRequests = 100

// MinDurationFloor is the shortest run MinDuration returns.
const MinDurationFloor = 10 * time.Second

// MinDuration is how long a run must last for an overload of tolerance
// (10%) to show as queueing: arrivals (1+tolerance) × capacity pile up
// tolerance × capacity requests a second, so a request sent t seconds in
// waits about tolerance × t; by the end of a run twice the TTFT SLO over
// the tolerance long (10 s for 500 ms at 10%), the last requests wait
// twice the TTFT SLO and fail it. At least MinDurationFloor, which also
// holds without a TTFT limit.
func MinDuration(slo stats.SLO, tolerance float64) time.Duration {
	if slo.TTFT <= 0 || !(tolerance > 0) {
		return MinDurationFloor
	}
	return max(MinDurationFloor, time.Duration(2*float64(slo.TTFT)/tolerance))
}

// Sizing is how long each run of a search lasts.
type Sizing struct {
	// MinRequests and MinDuration bound a run from below: an open-loop
	// run lasts max(MinDuration, MinRequests / rate); a closed-loop run
	// MinDuration, and a note says when it measured fewer requests.
	MinRequests int
	MinDuration time.Duration
	// MaxDuration bounds a run from above (thresholds.yaml's
	// capacity.max_run; none when 0): an open-loop run at a rate too low
	// for MinRequests in it is cut to it, and its note says so.
	MaxDuration time.Duration
	// Grace is how long requests in flight at the end may still finish
	// (load.DefaultGrace when 0); those cut are failed requests, which an
	// overloaded run has.
	Grace time.Duration
}

// Runner is the Probe that runs Base at each level on Server with
// pipeline.Run.
type Runner struct {
	Server server.Server
	// Base is the point every run derives from: its classes, warm-up,
	// burstiness and sampler interval (its rate, concurrency and sizing
	// are the search's).
	Base   scenario.Point
	Mode   Mode
	Sizing Sizing
	// SLO is the per-request goodput SLO (pipeline.WithGoodput).
	SLO stats.SLO
	// GoodputMin is the search's goodput minimum (thresholds.yaml's
	// capacity.goodput_min): with it, a run in Rate mode stops as soon as
	// more requests missed the SLO than a passing run allows (0: never).
	GoodputMin float64
	// Options go to every pipeline.Run (model, API key, timeouts).
	Options []pipeline.Option
	// OnRun, when set, is called with each run and its trial, e.g. to
	// record it or show progress.
	OnRun func(*result.Result, Trial)
}

// Point is the run at level: Base's requests, the level's load, sized.
func (r Runner) Point(level float64) scenario.Point {
	p := r.Base
	cfg := p.Load
	cfg.Concurrency, cfg.Rate, cfg.Requests, cfg.Grace = 0, 0, 0, r.Sizing.Grace
	cfg.Duration = r.Sizing.MinDuration
	if r.Mode == Concurrency {
		cfg.Concurrency = int(level)
		cfg.Burstiness, cfg.MaxConcurrency = 0, 0
		p.Key = benchname.ClosedPoint("", cfg.Concurrency)
	} else {
		cfg.Rate = level
		if need := time.Duration(math.Ceil(float64(r.Sizing.MinRequests) / level * float64(time.Second))); need > cfg.Duration {
			cfg.Duration = need
		}
		if m := r.Sizing.MaxDuration; m > 0 && cfg.Duration > m {
			cfg.Duration = m
		}
		p.Key = benchname.OpenPoint("", scenario.FormatRate(level))
		cfg.Misses = r.misses(level, cfg.Duration)
	}
	p.Load = cfg
	return p
}

// Probe runs the point at level and returns its trial. A run that could
// not start, a server that went down and a run stopped on a streak of
// identical failures are errors: a search cannot go on from them.
func (r Runner) Probe(ctx context.Context, level float64) (Trial, error) {
	opts := append(append([]pipeline.Option{}, r.Options...), pipeline.WithGoodput(r.SLO))
	res, err := pipeline.Run(ctx, r.Server, r.Point(level), opts...)
	if err != nil {
		return Trial{}, err
	}
	// An overloaded run is a failing trial, not the end of the search.
	ended := slices.DeleteFunc(check.Ended(res), func(e error) bool { return e == error(res.Load.Overload) })
	if len(ended) > 0 {
		return Trial{}, errors.Join(ended...)
	}
	if err := ctx.Err(); err != nil {
		return Trial{}, err
	}
	t := TrialOf(res, level, r.Sizing.MinRequests)
	if r.OnRun != nil {
		r.OnRun(res, t)
	}
	return t, nil
}

// TrialOf reads a run's trial at level (Pass is the search's to decide).
func TrialOf(res *result.Result, level float64, minRequests int) Trial {
	s := res.Summary
	t := Trial{Level: level, Requests: s.Completed + s.Failed, Good: s.GoodRequests, ReqPerSec: s.RequestThroughput, Duration: s.Duration}
	if ttft, ok := s.TTFT.Pct(99); ok {
		t.TTFTP99, t.HasP99 = ttft, true
		t.TPOTP99, _ = s.TPOT.Pct(99)
	}
	if v, ok := res.Metrics()[units.WaitingPeak]; ok {
		t.WaitingPeak, t.HasWaiting = v, true
	}
	t.Users = s.RequestThroughput * s.E2EL.Mean / 1000 // Little's law: L = λW
	if res.Point.Load.Concurrency > 0 {
		t.Users = float64(res.Point.Load.Concurrency)
	}
	stoppedEarly(&t, res)
	if t.Requests < minRequests {
		t.Notes = append(t.Notes, fmt.Sprintf("%d requests, fewer than %d: its goodput and P99s rest on few samples (raise the run length)", t.Requests, minRequests))
	}
	if e2el := time.Duration(s.E2EL.Mean * float64(time.Millisecond)); s.Completed > 0 && 3*e2el > s.Duration {
		t.Notes = append(t.Notes, fmt.Sprintf("requests took %s on average, over a third of the run's %s: it may have ended before the load settled (raise the run length)",
			e2el.Round(time.Millisecond), s.Duration.Round(time.Millisecond)))
	}
	return t
}
