package perfgate

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// minimumEffects reads each judged metric's spread per profile from the
// plan's history (an earlier run of the key), for the minimum detectable
// effects Write prints at the plan's count (docs/gate.md, "What the gate
// can see"). Without history the spreads are the prior's (plan_prior.go).
func (p *Plan) minimumEffects(set *thresholds.Set) error {
	if p.History == "" {
		return p.priorEffects(set)
	}
	p.SpreadFrom = p.History + "'s spread"
	in, err := input.ReadFile(p.History)
	if err != nil {
		return fmt.Errorf("the plan's history: %w", err)
	}
	if p.MinimumEffects, err = gate.MinimumEffects(in, set, p.Count, p.Processes); err != nil {
		return fmt.Errorf("the plan's history: %w", err)
	}
	return nil
}

// writeMinimumEffects writes one line a profile: each judged metric's
// minimum detectable effect at the plan's count and the count that would
// see 5%, and the metrics too noisy to see their min_effect.
func (p *Plan) writeMinimumEffects(w io.Writer) error {
	if len(p.MinimumEffects) == 0 {
		return p.writeNoPrior(w)
	}
	if _, err := fmt.Fprintf(w, "plan: minimum detectable effect at count %d (one metric changed on every point, %g%% power; from %s; 5%% from N runs):\n", p.Count, 100*gate.MDEPower, p.SpreadFrom); err != nil {
		return err
	}
	ms := p.MinimumEffects
	var noisy, floored []string
	for i := 0; i < len(ms); {
		var parts []string
		j := i
		for ; j < len(ms) && ms[j].Profile == ms[i].Profile; j++ {
			m := ms[j]
			e := m.At(p.Count)
			parts = append(parts, fmt.Sprintf("%s %s (%s)", m.Unit, planPct(e), planRuns(m)))
			switch {
			case !m.TooNoisyAt(p.Count):
			case m.Within(p.Count) > m.MinEffect || m.StartFloor() < m.MinEffect: // more runs would help
				noisy = append(noisy, fmt.Sprintf("%s %s (%s > min_effect %g%%)", m.Profile, m.Unit, planPct(e), 100*m.MinEffect))
			default: // only more starts would
				floored = append(floored, fmt.Sprintf("%s %s %g%%", m.Profile, m.Unit, 100*m.MinEffect))
			}
		}
		if _, err := fmt.Fprintf(w, "plan:   %s: %s\n", ms[i].Profile, strings.Join(parts, ", ")); err != nil {
			return err
		}
		i = j
	}
	if err := p.writeNoPrior(w); err != nil {
		return err
	}
	if m := ms[0]; m.StartSpread > 0 {
		above := ""
		if len(floored) > 0 {
			above = fmt.Sprintf("; that is above the min_effect of %s: more starts a side (VLLMPERF_STARTS) would see them, more runs would not", strings.Join(floored, ", "))
		}
		if _, err := fmt.Fprintf(w, "plan: %s (start_spread %g%%): a change of a whole profile under about %s cannot be told from a start at any count%s (docs/gate.md)\n", m.Starts(), 100*m.StartSpread, planPct(m.StartFloor()), above); err != nil {
			return err
		}
	}
	if len(noisy) > 0 {
		_, err := fmt.Fprintf(w, "plan: too noisy to see the minimum effect at count %d: %s\n", p.Count, strings.Join(noisy, ", "))
		return err
	}
	return nil
}

func planPct(e float64) string {
	if math.IsInf(e, 1) || math.IsNaN(e) {
		return "—"
	}
	return fmt.Sprintf("%.1f%%", 100*e)
}

// planRuns says the count that sees 5%: "5% from 34", "5% from > 100",
// or "5%: not with one server start a side" (gate.MDE.Starts) under the
// start floor.
func planRuns(m gate.MDE) string {
	if m.StartFloor() >= gate.MDEReference {
		return "5%: " + m.RunsForWords(gate.MDEReference)
	}
	if n := m.RunsFor(gate.MDEReference); n >= 0 {
		return fmt.Sprintf("5%% from %d", n)
	}
	return fmt.Sprintf("5%% from > %d", gatemath.MaxRunsEstimate)
}

// spreadOverStarts plans the suite as starts go test processes
// (VLLMPERF_STARTS): the count rounded up to a multiple of them (every
// process runs the same count), and the minimum detectable effects
// recomputed for that many starts of the new side.
func (p *Plan) spreadOverStarts(starts int, set *thresholds.Set) error {
	if starts <= 1 {
		return nil
	}
	p.Processes = starts
	if r := p.Count % starts; r != 0 {
		p.Note = strings.TrimPrefix(p.Note+fmt.Sprintf("; count %d rounded up to %d, a multiple of %s=%d", p.Count, p.Count+starts-r, envvar.Starts.Name, starts), "; ")
		p.SetCount(p.Count + starts - r)
	}
	p.Note = strings.TrimPrefix(p.Note+fmt.Sprintf("; %d go test processes of count %d: every profile's runs on %d server starts (docs/gate.md, \"More starts a side\")", starts, p.Count/starts, starts), "; ")
	return p.minimumEffects(set)
}
