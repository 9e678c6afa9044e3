package gate

import (
	"slices"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestNotGated: the rows reported without being judged (a direction, not
// a headline or tail metric) are counted by unit, the most first, and the
// report's first line names them; headline, tail and direction-less rows
// are not counted.
func TestNotGated(t *testing.T) {
	rep := &Report{Rows: []Row{
		{Unit: "ready-ns", Direction: units.Lower},
		{Unit: "prefix-hit-%", Direction: units.Higher},
		{Unit: "ready-ns", Direction: units.Lower},
		{Unit: units.TTFTP50, Direction: units.Lower, Headline: true},
		{Unit: units.TTFTP99, Direction: units.Lower, Tail: true},
		{Unit: "kv-peak-%"},
	}}
	want := []UnitCount{{"ready-ns", 2}, {"prefix-hit-%", 1}}
	if got := rep.NotGated(); !slices.Equal(got, want) {
		t.Errorf("NotGated %v, want %v", got, want)
	}
}
