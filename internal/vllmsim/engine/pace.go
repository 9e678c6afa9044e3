package engine

import (
	"github.com/vllmperf/vllmperf/internal/vllmsim/simpace"
)

// The real-time loop's pace: how much of the timing model's schedule the
// host kept. In real time a step starts where the previous one ended, as
// the model has it, as long as the loop woke within clock.CatchUpWindow of that
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
//     over the last clock.BehindWindow of it (0: the host kept the schedule).
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
