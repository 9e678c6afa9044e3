// Package simpace names the series in which vllm-sim reports how well
// the host kept its real-time loop on schedule, and the share of lost time
// beyond which a run's figures are the host's, not the timing model's. It
// imports nothing: the simulator that exposes the series (package
// internal/vllmsim/engine) and the harness that reads them (packages
// scrape and check) share it, so each name has one home.
//
// No vLLM metric has these names (they carry no "vllm:" prefix): a real
// vLLM or a third-party server does not expose them, and the suite's
// check on them (check's sim_real_time) does not apply there.
package simpace

// The simulator's pace series.
const (
	// MetricModelledSeconds counts the engine time the timing model asked
	// for, run in real time, in seconds.
	MetricModelledSeconds = "vllmperf_sim_real_time_modelled_seconds_total"
	// MetricLostSeconds counts the engine time lost because the host woke
	// the engine loop later than its schedule, in seconds: the engine served
	// that much less than its model computes.
	MetricLostSeconds = "vllmperf_sim_real_time_lost_seconds_total"
	// MetricBehindRatio is the engine time lost per second of engine
	// activity over the last second of it (0: the host kept the schedule).
	MetricBehindRatio = "vllmperf_sim_behind_real_time_ratio"
)

// BehindThreshold is the share of engine time lost to the host above
// which the simulator is behind real time: its figures are then the
// host's, not the model's. vllm-sim logs a warning beyond it, and the
// suite's check marks such a run INVALID.
const BehindThreshold = 0.05

// Names lists the series, counters first.
func Names() []string {
	return []string{MetricModelledSeconds, MetricLostSeconds, MetricBehindRatio}
}

// Owned reports whether name (as exposed) is one of the series.
func Owned(name string) bool {
	switch name {
	case MetricModelledSeconds, MetricLostSeconds, MetricBehindRatio:
		return true
	}
	return false
}
