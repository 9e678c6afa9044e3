package check

import (
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
)

func TestOverErrorRate(t *testing.T) {
	t.Parallel()
	half := &stats.Summary{Requests: 40, Completed: 20, Failed: 20,
		FailedByKind: map[sample.ErrorKind]int{sample.ErrHTTPStatus: 15, sample.ErrTimeout: 5}}
	for _, tc := range []struct {
		name  string
		s     *stats.Summary
		limit float64
		want  string // "" for no error
	}{
		// Half failed with no failure allowed: the rate, the limit as the
		// flag reads it and the most common kind.
		{"over", half, 0, "error rate 50.0% (20 of 40 measured requests failed) is above --max-error-rate 0%; most failed with http_status (15)"},
		// Exactly at the limit is within it.
		{"at the limit", half, 0.5, ""},
		// A fraction limit is written back as a percentage.
		{"over a fraction", half, 0.05, "is above --max-error-rate 5%"},
		// Nothing sent: no rate to hold against the limit.
		{"nothing sent", &stats.Summary{}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := OverErrorRate(tc.s, tc.limit, "--max-error-rate")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("err = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}
