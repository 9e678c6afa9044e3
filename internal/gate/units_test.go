package gate

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestUnitDirections: with no Unit line and nothing in thresholds.yaml,
// the gate judges each unit in package units' direction.
func TestUnitDirections(t *testing.T) {
	t.Parallel()
	d := &directions{set: thresholds.Default()}
	for _, u := range units.All() {
		if got, src := d.of("basic", "ttft-tpot", u.Name); got != u.Better || src != "default" {
			t.Errorf("%s: the gate's direction %v (%s), package units %v", u.Name, got, src, u.Better)
		}
	}
}
