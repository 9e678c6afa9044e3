package engine

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vllmperf/vllmperf/internal/vllmsim/simpace"
)

// The real-time loop's pace: how much of the timing model's schedule the
// host kept. In real time a step starts where the previous one ended, as
// the model has it, as long as the loop woke within catchUpWindow of that
// moment; woken later (a host too busy to run the loop on time, or too
// slow for the step rate), the step starts from now and the time in
// between is lost: the engine serves less than its model computes. The
// loop counts that time instead of dropping it silently, under
// vllmperf-specific metric names (no vLLM metric has them):
//
//   - MetricModelledSeconds: the step time the timing model asked for,
//     run in real time;
//   - MetricLostSeconds: the time lost to late wake-ups;
//   - MetricBehindRatio: the time lost per second of engine activity,
//     over the last BehindWindow of it (0: the host kept the schedule).
//
// A Simulation never loses time (its clock waits for it): its counters stay 0.
// The names and the threshold have their home in package simpace, which
// the harness reads them by.
const (
	MetricModelledSeconds = simpace.MetricModelledSeconds
	MetricLostSeconds     = simpace.MetricLostSeconds
	MetricBehindRatio     = simpace.MetricBehindRatio
)

// BehindThreshold is the engine time lost per second of real time above
// which the simulator is behind real time: its figures are then the host's, not the
// model's. vllm-sim logs a warning beyond it, the tests that compare
// the HTTP path with simulated time report such a run instead of counting
// it as the model's, and the suite's sim_real_time check marks it INVALID.
const BehindThreshold = simpace.BehindThreshold

// BehindWindow is the span of engine activity MetricBehindRatio covers.
const BehindWindow = time.Second

// pace keeps the real-time loop's account (the loop's goroutine only).
type pace struct {
	modelled, lost prometheus.Counter
	ratio          prometheus.Gauge
	// The current window: engine time lost since winStart.
	winStart time.Time
	winLost  time.Duration
}

// start places a step that the schedule has begin at sched (the previous
// step's end, or when a request left the front end; zero: no schedule, the
// engine was idle) and that the loop reaches at now: it returns when the step starts, sched when the loop is within
// catchUpWindow of it, else now, counting the time in between as lost.
func (p *pace) start(sched, now time.Time) time.Time {
	p.roll(now)
	if sched.IsZero() || sched.After(now) {
		return now
	}
	late := now.Sub(sched)
	if late < catchUpWindow {
		return sched
	}
	p.lost.Add(late.Seconds())
	p.winLost += late
	return now
}

// ran records d of modelled engine time.
func (p *pace) ran(d time.Duration) {
	p.modelled.Add(d.Seconds())
}

// roll opens a window at the first activity and closes it once it spans
// BehindWindow.
func (p *pace) roll(now time.Time) {
	if p.winStart.IsZero() {
		p.winStart = now
		return
	}
	if now.Sub(p.winStart) >= BehindWindow {
		p.close(now)
		p.winStart = now
	}
}

// close sets the ratio gauge from the window, if one is open, and closes
// it; the engine closes it when it goes idle, so that idle time never
// dilutes the next window.
func (p *pace) close(now time.Time) {
	if span := now.Sub(p.winStart); !p.winStart.IsZero() && span > 0 {
		p.ratio.Set(min(1, float64(p.winLost)/float64(span)))
	}
	p.winStart, p.winLost = time.Time{}, 0
}
