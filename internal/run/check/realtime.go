package check

import (
	"fmt"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/vllmsim/simpace"
)

// SimRealTime is the check on the simulator's pace: whether vllm-sim kept
// its timing model's schedule in real time during the run.
const SimRealTime = "sim_real_time"

// simulated reports whether the run's server exposes the simulator's pace
// series (package simpace) in either scrape: vllm-sim, in-process or in
// its container. A real vLLM or a third-party server exposes none, and the
// check does not apply to it, as prefix_hit does not apply to a scenario
// without prefix reuse: it is left out, neither a pass nor NOT_AVAILABLE.
func (c *checker) simulated() bool {
	for _, s := range []*scrape.Snapshot{c.res.Before, c.res.After} {
		if s == nil {
			continue
		}
		for _, name := range []string{simpace.MetricModelledSeconds, simpace.MetricLostSeconds} {
			if _, err := s.Metric(name); err == nil {
				return true
			}
		}
	}
	return false
}

// simRealTime: the engine time the simulator lost to the host during the
// run (Δ of simpace.MetricLostSeconds) is at most the scope's SimLostMax
// of the engine time its timing model asked for (Δ of
// simpace.MetricModelledSeconds). Beyond it the run is INVALID: the
// figures measured are the host's (a loop woken late, steps shorter than
// the host can pace), not the model's, and a baseline or a gate must not
// take them for the model's. Within it, a share above
// simpace.BehindThreshold (where vllm-sim warns) passes with a note that
// the latencies carry that much of the host: a busy host's late wake-ups,
// which the threshold's documentation in thresholds.yaml measures.
func (c *checker) simRealTime() Result {
	d, err := c.delta()
	if err != nil {
		return unavailable(SimRealTime, err)
	}
	modelled, err := d.Counter(simpace.MetricModelledSeconds)
	if err != nil {
		return unavailable(SimRealTime, err)
	}
	lost, err := d.Counter(simpace.MetricLostSeconds)
	if err != nil {
		return unavailable(SimRealTime, err)
	}
	if modelled <= 0 {
		if lost > 0 {
			return Result{Name: SimRealTime, Status: Invalid, Detail: fmt.Sprintf("the simulator lost %s to the host (Δ%s) and modelled none (Δ%s = 0): the figures are the host's",
				seconds(lost), simpace.MetricLostSeconds, simpace.MetricModelledSeconds)}
		}
		return Result{Name: SimRealTime, Status: Inconclusive, Detail: fmt.Sprintf("Δ%s = 0: the engine modelled no step during the run, so its pace cannot be told", simpace.MetricModelledSeconds)}
	}
	share, limit := lost/modelled, c.scope.Checks.SimLostMax
	detail := fmt.Sprintf("the simulator lost %s to the host in %s of modelled engine time (%.1f%%; Δ%s, Δ%s; limit %.0f%%)",
		seconds(lost), seconds(modelled), 100*share, simpace.MetricLostSeconds, simpace.MetricModelledSeconds, 100*limit)
	switch {
	case share > limit:
		return Result{Name: SimRealTime, Status: Invalid, Detail: detail + ": it fell behind real time, so the figures are the host's, not the model's (a busier host, or steps shorter than it can pace)"}
	case share > simpace.BehindThreshold:
		return pass(SimRealTime, "%s; above the %.0f%% at which vllm-sim warns: a busy host woke its loop late, and the latencies carry up to %.0f%% of the host's time",
			detail, 100*simpace.BehindThreshold, 100*share)
	}
	return pass(SimRealTime, "%s", detail)
}

// seconds writes a counter's seconds as a duration, to three or more
// significant digits (1.234s, 56.789ms, 12.345µs).
func seconds(v float64) time.Duration {
	d := time.Duration(v * float64(time.Second))
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(time.Microsecond)
	}
	return d
}
