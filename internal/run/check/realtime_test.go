package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/vllmsim/simpace"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// paceSeries reads testdata/simpace/name: the simulator's pace series as
// vllm-sim writes them on /metrics, to append to a vLLM exposition.
func paceSeries(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "simpace", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSimRealTime(t *testing.T) {
	t.Parallel()
	scope := thresholds.Default().Scope("p", "s")
	for _, tc := range []struct {
		name          string
		before, after string // files in testdata/simpace; "" for none
		status        Status // "" when the check must not appear
		detail        []string
	}{
		// 0.1 s lost in 10 s modelled: 1%, the model's figures.
		{"kept", "before.prom", "after-kept.prom", Pass, []string{"lost 100ms to the host in 10s of modelled engine time (1.0%", "limit 50%", simpace.MetricLostSeconds}},
		// 1.5 s lost in 10 s: 15%, within the limit of 50%, above vllm-sim's
		// warning at 5%: a pass that says so.
		{"busy host", "before.prom", "after-busy.prom", Pass, []string{"lost 1.5s to the host in 10s of modelled engine time (15.0%", "limit 50%", "above the 5% at which vllm-sim warns", "up to 15% of the host's time"}},
		// 6 s lost in 10 s: 60%, beyond the limit, the host's figures.
		{"behind", "before.prom", "after-far-behind.prom", Invalid, []string{"lost 6s to the host in 10s of modelled engine time (60.0%", "limit 50%", "fell behind real time", "the host's, not the model's"}},
		// A real vLLM or a third-party server: no such series, no check.
		{"not a simulator", "", "", "", nil},
		// The series half there: the missing one is named, never a pass.
		{"no lost counter", "before-no-lost.prom", "after-no-lost.prom", NotAvailable, []string{simpace.MetricLostSeconds}},
		// The engine modelled nothing between the scrapes: undecided.
		{"idle", "before.prom", "after-idle.prom", Inconclusive, []string{"modelled no step"}},
		// Time lost and none modelled: nothing of the model's was measured.
		{"idle, lost", "before.prom", "after-idle-lost.prom", Invalid, []string{"lost 500ms", "modelled none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := run{n: 8, before: zero, after: good, series: series(0.5, 8), drained: true, conc: 8, expect: scenario.Expect{Batching: true}}
			if tc.before != "" {
				r.before += paceSeries(t, tc.before)
			}
			if tc.after != "" {
				r.after += paceSeries(t, tc.after)
			}
			rs := All(r.result(t), scope, Facts{Started: true})
			if tc.status == "" {
				for _, got := range rs {
					if got.Name == SimRealTime {
						t.Fatalf("%s appears for a server without the simulator's series: %s", SimRealTime, got)
					}
					if got.Failed(true) {
						t.Errorf("a healthy run of a non-simulator fails in strict mode: %s", got)
					}
				}
				return
			}
			got := find(t, rs, SimRealTime)
			if got.Status != tc.status {
				t.Fatalf("status %s, want %s: %s", got.Status, tc.status, got.Detail)
			}
			for _, want := range tc.detail {
				if !strings.Contains(got.Detail, want) {
					t.Errorf("detail %q lacks %q", got.Detail, want)
				}
			}
			if tc.status == NotAvailable && !strings.Contains(got.Metric, simpace.MetricLostSeconds) {
				t.Errorf("NOT_AVAILABLE names metric %q, want %s", got.Metric, simpace.MetricLostSeconds)
			}
			if got.Failed(false) != (tc.status != Pass && tc.status != NotAvailable) {
				t.Errorf("Failed(false) = %v for %s", got.Failed(false), got.Status)
			}
		})
	}
}
