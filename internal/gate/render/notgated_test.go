package render

import (
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestNotGatedWords: the report's first line names the rows reported
// without being judged, by unit, the most first; "0 rows" without any.
func TestNotGatedWords(t *testing.T) {
	rep := Of(&gate.Report{Rows: []gate.Row{
		{Unit: "ready-ns", Direction: units.Lower},
		{Unit: "prefix-hit-%", Direction: units.Higher},
		{Unit: "ready-ns", Direction: units.Lower},
		{Unit: units.TTFTP50, Direction: units.Lower, Headline: true},
		{Unit: units.TTFTP99, Direction: units.Lower, Tail: true},
		{Unit: "kv-peak-%"},
	}})
	if w := rep.testsWords(); !strings.Contains(w, "3 rows reported only, not gated: ready-ns ×2, prefix-hit-% ×1") {
		t.Errorf("the first line %q does not name them", w)
	}
	if w := Of(&gate.Report{}).testsWords(); !strings.Contains(w, "(0 rows reported only)") {
		t.Errorf("none: %q", w)
	}
}

// TestNotGated: the rows reported without being judged (a direction, not
// a headline or tail metric) are counted by unit, the most first, and the
// report's first line names them; headline, tail and direction-less rows
// are not counted.
func TestNotGated(t *testing.T) {
	rep := Of(&gate.Report{Rows: []gate.Row{
		{Unit: "ready-ns", Direction: units.Lower},
		{Unit: "prefix-hit-%", Direction: units.Higher},
		{Unit: "ready-ns", Direction: units.Lower},
		{Unit: units.TTFTP50, Direction: units.Lower, Headline: true},
		{Unit: units.TTFTP99, Direction: units.Lower, Tail: true},
		{Unit: "kv-peak-%"},
	}})
	want := []UnitCount{{"ready-ns", 2}, {"prefix-hit-%", 1}}
	if got := rep.NotGated(); !slices.Equal(got, want) {
		t.Errorf("NotGated %v, want %v", got, want)
	}
}
