package check

import (
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/harness/telemetry"
)

func TestGPU(t *testing.T) {
	ok := telemetry.Summary{Available: true, Sources: []string{"nvidia-smi"}, Samples: 8, ProcessesKnown: true}
	throttled, atLimit, shared, dcgmOnly := ok, ok, ok, ok
	throttled.Throttled = []string{"GPU 0: SW power cap below the board's default power limit in 3 of 4 samples"}
	atLimit.AtPowerLimit = []string{"GPU 0: SW power cap at the board's default power limit in 4 of 4 samples"}
	shared.Foreign = []string{"pid 48211 train.py using 6144 MiB on GPU-5c7d"}
	dcgmOnly.ProcessesKnown = false
	for _, tc := range []struct {
		name     string
		s        telemetry.Summary
		required bool
		want     []Status
		failed   bool   // fails a strict run
		evidence string // in a detail
	}{
		// A quiet GPU passes both.
		{name: "normal", s: ok, required: true, want: []Status{Pass, Pass}},
		// Heat, hardware or a lowered power limit: INVALID with the evidence.
		{name: "throttled", s: throttled, required: true, want: []Status{Invalid, Pass}, failed: true, evidence: "SW power cap below"},
		// The board's own power limit under a full load: a pass that says so.
		{name: "at the default power limit", s: atLimit, required: true, want: []Status{Pass, Pass}, evidence: "full load's own ceiling"},
		// Another process: INVALID, naming it.
		{name: "shared", s: shared, required: true, want: []Status{Pass, Invalid}, failed: true, evidence: "pid 48211"},
		// dcgm-exporter lists no processes: not a pass.
		{name: "dcgm only", s: dcgmOnly, required: true, want: []Status{Pass, NotAvailable}, failed: true},
		// A GPU runner without telemetry fails a strict run.
		{name: "required, none", s: telemetry.Summary{Why: "nvidia-smi: not found"}, required: true, want: []Status{NotAvailable}, failed: true, evidence: "not found"},
		// The simulator: NOT_AVAILABLE, never a pass, never a failure.
		{name: "simulator", s: telemetry.Summary{Why: "no GPU telemetry source"}, want: []Status{NotAvailable}, evidence: "no GPU this machine can watch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := GPU(tc.s, tc.required)
			names := []string{GPUThrottle, GPUExclusive}
			if len(tc.want) == 1 {
				names = []string{GPUTelemetry}
			}
			if len(got) != len(names) {
				t.Fatalf("results %+v: want %v", got, names)
			}
			details := ""
			for i, r := range got {
				details += r.Detail
				if r.Name != names[i] || r.Status != tc.want[i] {
					t.Errorf("result %d: %s %s, want %s %s", i, r.Name, r.Status, names[i], tc.want[i])
				}
			}
			if !strings.Contains(details, tc.evidence) {
				t.Errorf("details %q lack %q", details, tc.evidence)
			}
			if f := len(Failures(got, true)) > 0; f != tc.failed {
				t.Errorf("fails a strict run: %v, want %v", f, tc.failed)
			}
		})
	}
}
