package report

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestColumnsFromUnits: the report tables' metric columns are package
// units' units, headed by their labels.
func TestColumnsFromUnits(t *testing.T) {
	t.Parallel()
	runs := makeTable(runColumns, nil, nil)
	sweep := sweepTable(Sweep{})
	for _, tc := range []struct {
		name   string
		header []string // the metric columns' headings
		units  []string
	}{
		{"runs", runs.Header[1 : 1+len(runUnits)], runUnits},
		{"sweep", sweep.Header[1 : 1+len(sweepUnits)], sweepUnits},
	} {
		for i, u := range tc.units {
			d, ok := units.Lookup(u)
			if !ok || tc.header[i] != d.Label {
				t.Errorf("%s table: column %q for %s, want a declared unit's label %q", tc.name, tc.header[i], u, d.Label)
			}
		}
	}
}
