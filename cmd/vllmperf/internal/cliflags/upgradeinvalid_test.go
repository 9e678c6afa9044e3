package cliflags

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// TestPublishInvalid: an INVALID gate (a run that was no sound
// measurement) exits 2 saying that more pairs cannot clear it, not 3
// asking for more pairs.
func TestPublishInvalid(t *testing.T) {
	rep := &gate.Report{Baseline: "old.txt", New: "new.txt",
		Rows:   []gate.Row{{Name: "Perf/profile=basic/scenario=ttft-tpot/prompt=short/conc=1", Verdict: gate.Inconclusive}},
		Checks: []gate.Check{{Kind: gate.RunnerCheckKind, Status: gate.CheckInvalid, Name: "runner"}}}
	res := &upgrade.Result{Report: rep, Pairs: 6, Rounds: []upgrade.Round{{Pairs: 6, Decision: rep.Decision(), Summary: rep.Headline()}}}
	o := UpgradeFlags{Old: "a", New: "b", Output: verdict.Output{Format: "summary"}}
	var out, errOut bytes.Buffer
	err := o.Publish(res, t.TempDir(), &out, &errOut)
	if code := exitstatus.Code(err, &errOut); code != exitstatus.BadUsage {
		t.Fatalf("exit %d, want 2: %v", code, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "more pairs cannot clear it") || strings.Contains(msg, "raise --max-pairs") {
		t.Errorf("the error %q: want it to say more pairs cannot clear it, not to raise --max-pairs", msg)
	}
}
