package stats

import (
	"strings"
	"testing"
	"time"
)

// TestExtraPercentiles: Options.Percentiles adds percentiles to every
// distribution beside the defaults, ascending and once each (vLLM's
// --metric-percentiles); one outside (0, 100) is refused.
func TestExtraPercentiles(t *testing.T) {
	t.Parallel()
	d := distAt([]float64{4, 1, 3, 2}, 4, withDefaults([]float64{25, 99, 75}))
	var got []float64
	for _, p := range d.Pcts {
		got = append(got, p.P)
	}
	want := []float64{25, 50, 75, 90, 95, 99, 99.9}
	if len(got) != len(want) {
		t.Fatalf("percentiles %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("percentiles %v, want %v", got, want)
		}
	}
	if v, ok := d.Pct(25); !ok || v != 1.75 { // numpy.percentile([1,2,3,4], 25)
		t.Errorf("p25 = %v, %v; want 1.75 as numpy computes it", v, ok)
	}
	now := time.Now()
	for _, bad := range []float64{0, 100, -5} {
		_, err := SummarizeWith(nil, now, now, Options{Percentiles: []float64{bad}})
		if err == nil || !strings.Contains(err.Error(), "between 0 and 100") {
			t.Errorf("percentile %v: %v, want it refused", bad, err)
		}
	}
}
