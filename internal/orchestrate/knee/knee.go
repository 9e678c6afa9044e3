// Package knee finds where a concurrency sweep stops paying: the
// saturation point, where one more step of concurrency bought little more
// throughput while the tail latency climbed, and the highest concurrency
// whose figures still meet the SLO. The recommended concurrency limit is
// the lower of the two (the seed article: choose the limit by the P99 the
// business accepts, not by the top tokens/s).
package knee

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Point is one sweep point: its concurrency and its reported metrics by
// bench unit (tok/s, e2el-p99-ns, ...).
type Point struct {
	Concurrency int
	Metrics     map[string]float64
}

// Step compares two neighbouring points.
type Step struct {
	From, To int
	// Gain is the relative throughput change, LatencyGrowth the relative
	// latency change (0.25 = +25%).
	Gain, LatencyGrowth float64
	// Saturated marks the step where gain fell below the minimum while
	// latency grew past its threshold.
	Saturated bool
}

// Result is what the sweep says.
type Result struct {
	// Knee is the last concurrency where more concurrency still paid (the
	// point before Saturation); Saturation the first where it did not.
	// Both are 0 when the sweep never saturated.
	Knee, Saturation int
	// SLOMax is the highest concurrency whose metrics meet every SLO
	// limit (0: none does, or no limit applies: see SLOChecked).
	SLOMax     int
	SLOChecked bool
	// Recommended is min(Knee, SLOMax) over those found; 0 when neither.
	Recommended int
	// Steps are the neighbouring comparisons, in order.
	Steps []Step
	// Explanation says, with the numbers, how the figures were reached.
	Explanation []string
}

// Find computes the knee over points (any order; sorted by concurrency)
// with the settings k and the SLO limits slo (unit → limit). Points that
// lack k's throughput or latency unit are left out of the steps, and the
// explanation says so.
func Find(points []Point, k thresholds.Knee, slo map[string]thresholds.Limit) Result {
	pts := slices.Clone(points)
	slices.SortFunc(pts, func(a, b Point) int { return a.Concurrency - b.Concurrency })
	var r Result
	var usable []Point
	for _, p := range pts {
		_, okT := p.Metrics[k.Throughput]
		_, okL := p.Metrics[k.Latency]
		if okT && okL {
			usable = append(usable, p)
			continue
		}
		r.Explanation = append(r.Explanation, fmt.Sprintf("concurrency %d lacks %s or %s: left out", p.Concurrency, k.Throughput, k.Latency))
	}
	for i := 1; i < len(usable); i++ {
		a, b := usable[i-1], usable[i]
		s := Step{From: a.Concurrency, To: b.Concurrency,
			Gain:          rel(a.Metrics[k.Throughput], b.Metrics[k.Throughput]),
			LatencyGrowth: rel(a.Metrics[k.Latency], b.Metrics[k.Latency])}
		s.Saturated = s.Gain < k.MinGain && s.LatencyGrowth >= k.MinLatencyGrowth
		if s.Saturated && r.Saturation == 0 {
			r.Saturation, r.Knee = b.Concurrency, a.Concurrency
			r.Explanation = append(r.Explanation, fmt.Sprintf("saturation at concurrency %d: going from %d to %d bought %+.0f%% %s (%s → %s, below the %.0f%% that pays) while %s grew %+.0f%% (%s → %s)",
				b.Concurrency, a.Concurrency, b.Concurrency, 100*s.Gain, k.Throughput,
				units.FormatValue(k.Throughput, a.Metrics[k.Throughput]), units.FormatValue(k.Throughput, b.Metrics[k.Throughput]), 100*k.MinGain,
				k.Latency, 100*s.LatencyGrowth, units.FormatValue(k.Latency, a.Metrics[k.Latency]), units.FormatValue(k.Latency, b.Metrics[k.Latency])))
		}
		r.Steps = append(r.Steps, s)
	}
	if r.Saturation == 0 && len(usable) > 1 {
		r.Explanation = append(r.Explanation, fmt.Sprintf("no saturation up to concurrency %d: every step bought at least %.0f%% more %s or kept %s within +%.0f%%",
			usable[len(usable)-1].Concurrency, 100*k.MinGain, k.Throughput, k.Latency, 100*k.MinLatencyGrowth))
	}
	r.sloMax(pts, slo)
	switch {
	case r.Knee > 0 && r.SLOMax > 0:
		r.Recommended = min(r.Knee, r.SLOMax)
	case r.Knee > 0 && !r.SLOChecked:
		r.Recommended = r.Knee
	case r.SLOMax > 0:
		r.Recommended = r.SLOMax
	}
	if r.Recommended > 0 {
		r.Explanation = append(r.Explanation, fmt.Sprintf("recommended concurrency limit: %d", r.Recommended))
	} else {
		r.Explanation = append(r.Explanation, "no recommended concurrency limit: the sweep neither saturated nor met an SLO")
	}
	return r
}

// sloMax finds the highest concurrency meeting every limit that applies
// to the points' units.
func (r *Result) sloMax(pts []Point, slo map[string]thresholds.Limit) {
	units := make([]string, 0, len(slo))
	for u := range slo {
		units = append(units, u)
	}
	slices.Sort(units)
	for _, p := range pts {
		var broken []string
		checked := false
		for _, u := range units {
			v, ok := p.Metrics[u]
			if !ok {
				continue
			}
			checked = true
			if why := slo[u].Check(u, v); why != "" {
				broken = append(broken, why)
			}
		}
		if !checked {
			continue
		}
		r.SLOChecked = true
		if len(broken) == 0 {
			r.SLOMax = p.Concurrency
			continue
		}
		r.Explanation = append(r.Explanation, fmt.Sprintf("concurrency %d breaks the SLO: %s", p.Concurrency, strings.Join(broken, "; ")))
	}
	switch {
	case !r.SLOChecked:
		r.Explanation = append(r.Explanation, "no SLO limit applies to the sweep's metrics: the limit rests on saturation alone")
	case r.SLOMax > 0:
		r.Explanation = append(r.Explanation, fmt.Sprintf("highest concurrency meeting the SLO: %d", r.SLOMax))
	}
}

// rel is the relative change from a to b (0 when a is 0).
func rel(a, b float64) float64 {
	if a == 0 {
		return 0
	}
	return b/a - 1
}
