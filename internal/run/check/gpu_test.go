package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/telemetry"
)

func TestGPU(t *testing.T) {
	ok := telemetry.Summary{Available: true, Sources: []string{"nvidia-smi"}, Samples: 8, WithReasons: 8, ProcessesKnown: true, Own: 1, ServerOnGPU: true}
	throttled, atLimit, shared, dcgmOnly, noReasons, noProcess, simIdle := ok, ok, ok, ok, ok, ok, ok
	noReasons.WithReasons = 0
	noProcess.Own = 0
	simIdle.Own, simIdle.ServerOnGPU = 0, false
	staleDCGM := ok
	staleDCGM.Unread = []string{"dcgm-exporter http://127.0.0.1:9400/metrics: the values did not change in 9 reads"}
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
		// No sample carried the reasons (a stock dcgm-exporter): not a pass.
		{name: "no reasons", s: noReasons, required: true, want: []Status{NotAvailable, Pass}, failed: true, evidence: "DCGM_FI_DEV_CLOCKS_EVENT_REASONS, gauge"},
		// No process at all, not even the server's (no host PID namespace): not a pass.
		{name: "no process visible", s: noProcess, required: true, want: []Status{Pass, NotAvailable}, failed: true, evidence: "not even the server's"},
		// The simulator watched on an idle GPU (VLLMPERF_TELEMETRY=on): no
		// process to show that processes are visible; said, not failed.
		{name: "simulator, no process", s: simIdle, required: true, want: []Status{Pass, NotAvailable}, evidence: "the server runs none on these GPUs (the simulator)"},
		// An exporter whose values predate the run, beside nvidia-smi: its
		// samples are not evidence, and the detail says so.
		{name: "stale exporter", s: staleDCGM, required: true, want: []Status{Pass, Pass}, evidence: "not read: dcgm-exporter"},
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

// TestGPUThrottleStockDCGM: a dcgm-exporter page with its default counters
// (no clock-event reasons field) gives gpu/throttle NOT_AVAILABLE, naming
// the field to add, never a PASS; the same page with the field passes.
func TestGPUThrottleStockDCGM(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Status
	}{
		{"dcgm-no-reasons.prom", NotAvailable}, // the default counters CSV
		{"dcgm-normal.prom", Pass},             // with DCGM_FI_DEV_CLOCKS_EVENT_REASONS
	} {
		f, err := os.Open(filepath.Join("..", "..", "target", "telemetry", "testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		fams, err := scrape.ParseFamilies(f, tc.file, time.Now())
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		samples, err := telemetry.FromDCGM(fams)
		if err != nil {
			t.Fatal(err)
		}
		start := samples[0].At.Add(-time.Second)
		s := telemetry.Summarize([]telemetry.Recording{{Source: "dcgm-exporter", Samples: samples, Start: start, End: start.Add(2 * time.Second)}}, nil)
		got := GPU(s, true)[0]
		if got.Name != GPUThrottle || got.Status != tc.want {
			t.Errorf("%s: %s %s (%s), want %s %s", tc.file, got.Name, got.Status, got.Detail, GPUThrottle, tc.want)
		}
		if tc.want == NotAvailable && (!strings.Contains(got.Detail, "DCGM_FI_DEV_CLOCKS_EVENT_REASONS") || len(Failures([]Result{got}, true)) == 0) {
			t.Errorf("%s: %q: want the field to add named, and a strict run failed", tc.file, got.Detail)
		}
	}
}
