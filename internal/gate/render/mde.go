package render

import (
	"fmt"
	"math"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// writeMDE writes the minimum detectable effects, one line a profile.
func writeMDE(ew *verdict.ErrWriter, ms []gate.MDE) {
	if len(ms) == 0 {
		return
	}
	none := false
	ew.Printf("\nminimum detectable effects (one metric changed on every point of a profile, found with %g%% power; from the baseline's run-to-run spread):\n", 100*gate.MDEPower)
	for i := 0; i < len(ms); {
		j := i
		var parts []string
		for ; j < len(ms) && ms[j].Profile == ms[i].Profile; j++ {
			m := ms[j]
			if math.IsNaN(m.Spread) {
				parts = append(parts, m.Unit+" unknown (fewer than 3 baseline runs)")
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %s (%g%%: %s)", m.Unit, gate.FormatMDE(m.Effect), 100*gate.MDEReference, m.RunsWords()))
			none = none || math.IsInf(m.Effect, 1)
		}
		ew.Printf("  %s at %d runs a side: %s\n", gate.ProfileName(ms[i].Profile), ms[i].Runs, strings.Join(parts, ", "))
		i = j
	}
	if none {
		ew.Printf("  (—: with so few runs the exact test cannot reach the level the correction asks for)\n")
	}
	if m := ms[0]; m.StartAware() && m.StartSpread > 0 {
		ew.Printf("  (%s, start_spread %g%%: a change of a whole profile under about %s cannot be told from a start, whatever the count; docs/gate.md)\n",
			m.Starts(), 100*m.StartSpread, gate.FormatMDE(m.StartFloor()))
	}
}
