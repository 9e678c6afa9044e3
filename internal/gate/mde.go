package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// MDEPower is the chance at which a minimum detectable effect is found.
const MDEPower = 0.8

// MDEReference is the change the "runs for" figure aims at (5%).
const MDEReference = 0.05

// MDE is one judged metric's minimum detectable effect in one profile
// (docs/gate.md, "What the gate can see"): the smallest change of the
// metric on every point of the profile that the profile's test finds
// with MDEPower, from the run-to-run spread of the baseline. For a tail
// metric, tested by runs (tailTest), Spread is the standard deviation,
// across the baseline's runs, of the run's mean log value over the
// profile's points (it keeps the correlation of points measured in one
// run); for a headline metric, whose rows are tested one by one and
// combined, it is a typical row's: the median over the points of the sd
// of the point's log values (pointSpread).
// Level is the one-sided level the test must reach at the first step of
// the one α procedure: α over the profiles, times the test's share of
// its profile's α (componentWeight). With n runs a side the U test
// sees a shift of (z(1−Level) + z(MDEPower))·Spread·√(2/n)·√(π/3) on the
// log scale (√(π/3): the U test's efficiency against the t test), and
// the exact test must be able to go below Level at all (1/C(2n, n)).
// Where the runs of a side share one server start (the suite), the test
// must also pass its start-aware part (start.go), which sees a shift of
// (z(1−Level) + z(MDEPower))·√(share·StartSpread² + 2·RunSpread²/n)
// (share 1/BaseStarts + 1/NewStarts: 2 with one start a side): the
// effect is the larger of the two, and never under the start floor
// (StartFloor), however many runs.
type MDE struct {
	Profile, Unit string
	// Points is the number of points whose runs lined up.
	Points int
	Spread float64
	Level  float64
	// Runs is the count (runs a side) Effect is for; Effect is +Inf when
	// the exact test cannot reach Level with Runs.
	Runs   int
	Effect float64
	// RunsFor5 is the runs a side that see MDEReference; -1 when more
	// than MaxRunsEstimate.
	RunsFor5 int
	// MinEffect is the metric's configured min_effect; TooNoisy says
	// that Effect is larger at a count of at least min_samples: the
	// baseline is too noisy for the gate to see it.
	MinEffect float64
	TooNoisy  bool
	// StartSpread is the start_spread setting where the runs of a side
	// share a start (0 otherwise); RunSpread the sd across the
	// baseline's runs of the run's mean log value over the points (the
	// start-aware test's sampling part).
	StartSpread, RunSpread float64
	// BaseStarts and NewStarts are the server starts of each side
	// (ServerStartKey; a plan's new run is one process: one start).
	BaseStarts, NewStarts int

	minSamples int
	startAware bool
}

// At is the minimum detectable effect with n runs a side: the larger of
// the within-start test's (Within) and the start-aware test's.
func (m MDE) At(n int) float64 {
	e := m.Within(n)
	if m.startAware && !math.IsInf(e, 1) {
		rs := m.RunSpread
		if math.IsNaN(rs) {
			rs = m.Spread
		}
		e = max(e, math.Expm1(m.z()*math.Sqrt(m.startShare()*m.StartSpread*m.StartSpread+2*rs*rs/float64(n))))
	}
	return e
}

// Within is the minimum detectable effect of the test within the starts
// alone (the runs as independent draws) with n runs a side: what more
// runs improve, and what TooNoisy judges.
func (m MDE) Within(n int) float64 {
	if n < 2 || math.IsNaN(m.Spread) || 1/math.Exp(gatemath.LogChoose(2*n, n)) >= m.Level {
		return math.Inf(1)
	}
	return math.Expm1(m.z() * m.Spread * math.Sqrt(2/float64(n)) * math.Sqrt(math.Pi/3))
}

// StartFloor is the smallest change the start-aware test sees with
// MDEPower at any count: the starts' difference alone (0 where the runs
// do not share a start). A smaller change needs more server starts, not
// more runs.
func (m MDE) StartFloor() float64 {
	if !m.startAware {
		return 0
	}
	return math.Expm1(m.z() * math.Sqrt(m.startShare()) * m.StartSpread)
}

func (m MDE) startShare() float64 { return gatemath.StartShare(m.BaseStarts, m.NewStarts) }

// Starts says the sides' server starts in words ("one server start a
// side").
func (m MDE) Starts() string { return startsPhrase(m.BaseStarts, m.NewStarts, "server start") }

func (m MDE) z() float64 {
	return stats.StdNormal.InvCDF(1-m.Level) + stats.StdNormal.InvCDF(MDEPower)
}

// RunsForWords says RunsFor(effect) in words: "34", "> 100", or "not
// with one server start a side" (Starts) where effect is under the
// start floor.
func (m MDE) RunsForWords(effect float64) string {
	if effect <= m.StartFloor() {
		return "not with " + m.Starts()
	}
	return FormatRunsFor(m.RunsFor(effect))
}

// MinSamples is the min_samples of the metric's settings: below it the
// gate decides nothing, and TooNoisy is not said.
func (m MDE) MinSamples() int { return m.minSamples }

// StartAware says whether the runs of a side share a server start, so
// that the start-aware test (and its floor) applies.
func (m MDE) StartAware() bool { return m.startAware }

// RunsFor is the fewest runs a side that see effect, at least
// min_samples; -1 when more than MaxRunsEstimate.
func (m MDE) RunsFor(effect float64) int {
	for n := max(2, m.minSamples); n <= gatemath.MaxRunsEstimate; n++ {
		if m.At(n) <= effect {
			return n
		}
	}
	return -1
}

// runsWithin is RunsFor for the test within the starts alone (Within).
func (m MDE) runsWithin(effect float64) int {
	for n := max(2, m.minSamples); n <= gatemath.MaxRunsEstimate; n++ {
		if m.Within(n) <= effect {
			return n
		}
	}
	return -1
}

// fewestStarts is the smaller of n (0: none yet) and b's server starts.
func fewestStarts(n int, b *input.Bench) int {
	if k := max(1, len(b.Starts)); n == 0 || k < n {
		return k
	}
	return n
}

// MinimumEffects are the minimum detectable effects of base's judged
// metrics (headline and tail) per profile at count runs a side on starts
// server starts (go test processes; at least one), with set's α and
// min_effect: what `vllmperf plan` shows for a run of the suite at count.
func MinimumEffects(base *input.Input, set *thresholds.Set, count, starts int) ([]MDE, error) {
	if set == nil {
		set = thresholds.Empty()
	}
	g, err := input.NewGrouping()
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	ms := spreads(g.Group(base, nil), set, true)
	for i := range ms {
		ms[i].NewStarts = max(1, starts)
		ms[i].setRuns(count)
	}
	return ms, nil
}

// minimumEffects are the baseline's minimum detectable effects at the
// new side's count, for the report; starts as Compare's (start-aware
// tests where a side's runs share a start).
func minimumEffects(bs, ns *input.Side, set *thresholds.Set, starts bool) []MDE {
	ms := spreads(bs, set, starts)
	for i := range ms {
		var lens []int
		for _, k := range ns.Order {
			if b := ns.Benches[k]; b.Profile == ms[i].Profile && len(b.Values[ms[i].Unit]) > 0 {
				lens = append(lens, len(b.Values[ms[i].Unit]))
				ms[i].NewStarts = fewestStarts(ms[i].NewStarts, b)
			}
		}
		ms[i].setRuns(gatemath.ModeInt(lens))
	}
	return ms
}

func (m *MDE) setRuns(n int) {
	m.Runs, m.Effect, m.RunsFor5 = n, m.At(n), m.RunsFor(MDEReference)
	m.TooNoisy = m.TooNoisyAt(n)
}

// TooNoisyAt says whether, with n runs a side (at least min_samples), the
// gate cannot see the metric's min_effect on every point: the baseline's
// run-to-run spread and, where a side's runs share a server start, the
// starts' allowance (At). The warning (tooNoisy) says which: more runs
// lower the first, only more starts a side the second (StartFloor).
func (m MDE) TooNoisyAt(n int) bool {
	return n >= m.minSamples && m.At(n) > m.MinEffect
}

// spreads measures each judged metric's spread per profile on one side
// (its runs lined up by index, as tailTest does); starts adds the
// start-aware terms and the suite-wide test's share of α.
func spreads(s *input.Side, set *thresholds.Set, starts bool) []MDE {
	type key struct{ profile, unit string }
	var keys []key
	points := map[key][][]float64{}
	startsOf := map[key]int{}
	for _, k := range s.Order {
		b := s.Benches[k]
		for _, u := range b.Units {
			if !units.Headline(u) && !units.IsTail(u) {
				continue
			}
			kk := key{b.Profile, u}
			if _, ok := points[kk]; !ok {
				keys = append(keys, kk)
			}
			points[kk] = append(points[kk], b.Values[u])
			startsOf[kk] = fewestStarts(startsOf[kk], b)
		}
	}
	tails, headline := map[string]int{}, map[string]bool{}
	for _, kk := range keys {
		if units.IsTail(kk.unit) {
			tails[kk.profile]++
		} else {
			headline[kk.profile] = true
		}
	}
	// One profile's metrics together, profiles in the order they came.
	first := map[string]int{}
	for i, kk := range keys {
		if _, ok := first[kk.profile]; !ok {
			first[kk.profile] = i
		}
	}
	slices.SortStableFunc(keys, func(a, b key) int { return first[a.profile] - first[b.profile] })
	hypotheses, suite := len(first), starts && len(headline) >= 2
	for _, kk := range keys {
		suite = suite && (units.IsTail(kk.unit) || set.Gate(kk.profile, "", kk.unit).StartSpread > 0)
	}
	if suite { // the suite-wide test: one more hypothesis in Holm's correction
		hypotheses++
	}
	out := make([]MDE, 0, len(keys))
	for _, kk := range keys {
		g := set.Gate(kk.profile, "", kk.unit)
		m := MDE{Profile: kk.profile, Unit: kk.unit, MinEffect: g.MinEffect, minSamples: g.MinSamples,
			Level: g.Alpha / float64(hypotheses) * gatemath.ComponentWeight(!units.IsTail(kk.unit), headline[kk.profile], tails[kk.profile])}
		m.RunSpread, m.Points = gatemath.RunSpread(points[kk])
		m.BaseStarts = startsOf[kk]
		if !units.IsTail(kk.unit) {
			m.Spread, m.Points = gatemath.PointSpread(points[kk])
		} else {
			m.Spread = m.RunSpread
		}
		if starts && g.StartSpread > 0 {
			m.startAware, m.StartSpread = true, g.StartSpread
		}
		out = append(out, m)
	}
	return out
}

// tooNoisy are the report's warnings for metrics whose baseline is too
// noisy to see their min_effect, by name.
func tooNoisy(ms []MDE) []string {
	var out, floored []string
	var floor MDE
	lo, hi := math.Inf(1), 0.0
	for _, m := range ms {
		switch {
		case !m.TooNoisy:
		case m.Within(m.Runs) > m.MinEffect:
			out = append(out, noisyRuns(m))
		case m.StartFloor() >= m.MinEffect:
			floored = append(floored, fmt.Sprintf("%s %s (min_effect %g%%)", ProfileName(m.Profile), m.Unit, 100*m.MinEffect))
			floor, lo, hi = m, min(lo, m.StartFloor()), max(hi, m.StartFloor())
		default:
			out = append(out, fmt.Sprintf("baseline too noisy to see the minimum effect: profile %s, %s: at %d runs a side the gate sees a change of %s on every point, more than its min_effect %g%% (%s within a start, the server starts' allowance with %s, start_spread %g%%, added); about %d runs a side would see it (docs/gate.md)",
				ProfileName(m.Profile), m.Unit, m.Runs, FormatMDE(m.Effect), 100*m.MinEffect, FormatMDE(m.Within(m.Runs)), m.Starts(), 100*m.StartSpread, m.RunsFor(m.MinEffect)))
		}
	}
	if len(floored) > 0 {
		span := FormatMDE(lo)
		if hi > lo+0.0005 {
			span += "–" + FormatMDE(hi)
		}
		out = append(out, fmt.Sprintf("the server starts' floor is above the minimum effect: with %s (start_spread %g%%) no count sees a change under about %s on every point (the floor by metric), more than the min_effect of %d judged metrics: %s; run more server starts a side (VLLMPERF_STARTS), or measure start_spread (docs/gate.md)",
			floor.Starts(), 100*floor.StartSpread, span, len(floored), strings.Join(floored, ", ")))
	}
	return out
}

// noisyRuns is the warning of a metric whose run-to-run spread alone
// keeps the gate from seeing its min_effect.
func noisyRuns(m MDE) string {
	w := fmt.Sprintf("baseline too noisy to see the minimum effect: profile %s, %s: at %d runs a side the gate sees a change of %s on every point (run-to-run spread %.1f%%), more than its min_effect %g%%",
		ProfileName(m.Profile), m.Unit, m.Runs, FormatMDE(m.Within(m.Runs)), 100*m.Spread, 100*m.MinEffect)
	if f := m.StartFloor(); f > 0 {
		w += fmt.Sprintf(" even before the server starts' allowance (%s with it; the starts' floor %s with %s)", FormatMDE(m.Effect), FormatMDE(f), m.Starts())
	}
	if n := m.runsWithin(m.MinEffect); n > 0 {
		w += fmt.Sprintf("; about %d runs a side would see it", n)
		if m.StartFloor() >= m.MinEffect {
			w += " within one start (more starts a side are needed to tell it from a start)"
		}
	}
	return w + " (or raise its min_effect, or make the runs steadier: docs/gate.md)"
}

// ProfileName is a profile as the reports name it: "(no profile)" for
// benchmarks without one.
func ProfileName(profile string) string {
	if profile == "" {
		return "(no profile)"
	}
	return profile
}

// FormatMDE writes an effect: "12.3%", or "—" when the count can see
// none.
func FormatMDE(e float64) string {
	if math.IsInf(e, 1) || math.IsNaN(e) {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*e)
}

// FormatRunsFor writes RunsFor5: "34", or "> 100".
func FormatRunsFor(n int) string {
	if n < 0 {
		return fmt.Sprintf("> %d", gatemath.MaxRunsEstimate)
	}
	return fmt.Sprint(n)
}

// RunsWords is the runs a side that see MDEReference, in words: "from 34
// runs", "from > 100 runs", or "not with one server start a side"
// (Starts).
func (m MDE) RunsWords() string {
	if w := m.RunsForWords(MDEReference); w != FormatRunsFor(m.RunsFor5) {
		return w
	}
	return "from " + FormatRunsFor(m.RunsFor5) + " runs"
}
