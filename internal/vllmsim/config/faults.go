package config

import (
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/argcheck"
)

// FaultOptions are the --sim-fault-* flags. Rates are probabilities in [0, 1]
// drawn per request from a generator seeded by --sim-seed.
type FaultOptions struct {
	Rate500        float64       // --sim-fault-500-rate: answer 500 without running the request
	Rate429        float64       // --sim-fault-429-rate: answer 429 without running the request
	DisconnectRate float64       // --sim-fault-disconnect-rate: cut the connection mid-response
	Stall          time.Duration // --sim-fault-stall: how long a stalled stream pauses
	StallRate      float64       // --sim-fault-stall-rate: share of streams that stall once
	// UsageSkew is --sim-fault-usage-skew: usage.completion_tokens (and
	// total_tokens) report this many tokens more (fewer, when negative;
	// never below 0) than the engine generated and counted in
	// vllm:generation_tokens_total, so that a client's counter
	// reconciliation has a mismatch to find.
	UsageSkew     int
	MetricsDelay  time.Duration // --sim-fault-metrics-delay: /metrics answers this late
	MetricsBroken bool          // --sim-fault-metrics-malformed: /metrics is not valid exposition text
	// DropMetrics is --sim-fault-drop-metric: metric families (names as
	// /metrics shows them, e.g. vllm:prompt_tokens_total) left out of
	// /metrics, so that a client's "missing metric" checks have one to find.
	DropMetrics  []string
	RestartAfter int // --sim-fault-restart-after: restart (fresh engine and counters) after N requests
	DieAfter     int // --sim-fault-die-after: the engine dies after N requests
}

// validate checks the fault flags on their own and in pairs.
func (f FaultOptions) validate() error {
	for _, r := range []struct {
		flag string
		v    float64
	}{{"sim-fault-500-rate", f.Rate500}, {"sim-fault-429-rate", f.Rate429}, {"sim-fault-disconnect-rate", f.DisconnectRate}, {"sim-fault-stall-rate", f.StallRate}} {
		if err := argcheck.Rate(r.v); err != nil {
			return ArgErrorf("argument --%s: %v", r.flag, err)
		}
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"sim-fault-stall", f.Stall}, {"sim-fault-metrics-delay", f.MetricsDelay}} {
		if err := argcheck.NonNegative(d.v); err != nil {
			return ArgErrorf("argument --%s: %v", d.flag, err)
		}
	}
	for _, n := range []struct {
		flag string
		v    int
	}{{"sim-fault-restart-after", f.RestartAfter}, {"sim-fault-die-after", f.DieAfter}} {
		if err := argcheck.IntRange(n.v, 0, anyInt); err != nil {
			return ArgErrorf("argument --%s: %v", n.flag, err)
		}
	}
	for _, name := range f.DropMetrics {
		if strings.TrimSpace(name) == "" {
			return ArgErrorf("argument --sim-fault-drop-metric: empty metric name (give names such as vllm:kv_cache_usage_perc, separated by commas)")
		}
	}
	return f.validatePairs()
}

// validatePairs checks the fault flags that only make sense together.
func (f FaultOptions) validatePairs() error {
	if f.StallRate > 0 && f.Stall == 0 {
		return ArgErrorf("argument --sim-fault-stall-rate: %g has no effect without --sim-fault-stall (add e.g. --sim-fault-stall 2s)", f.StallRate)
	}
	if f.Stall > 0 && f.StallRate == 0 {
		return ArgErrorf("argument --sim-fault-stall: %s has no effect without --sim-fault-stall-rate (add e.g. --sim-fault-stall-rate 0.1)", f.Stall)
	}
	if f.Rate500+f.Rate429 > 1 {
		return ArgErrorf("arguments --sim-fault-500-rate %g and --sim-fault-429-rate %g add up to more than 1: lower one of them", f.Rate500, f.Rate429)
	}
	return nil
}
