package render

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/gatetest"
	"github.com/vllmperf/vllmperf/internal/gate/input"
)

// TestFailedCheckInEveryFormat: a check that failed a benchmark is
// named in every format, and gate.json's summary and exit code say so.
func TestFailedCheckInEveryFormat(t *testing.T) {
	const bench = "Perf/profile=basic/scenario=concurrency-sweep/conc=8"
	next := gatetest.WithFailBlock(t, filepath.Join("..", "testdata", "bench", "noise.txt"), bench, input.CheckLine("FAIL", "reconcile/generation_tokens", "the server counted 8192 tokens, the client 8320"))
	got, err := gate.Compare(readBench(t, "base.txt"), next, loadThresholds(t, "thresholds.yaml"), gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := Of(got)
	wantName := bench + ": reconcile/generation_tokens (FAIL)"
	for _, format := range Formats {
		var buf bytes.Buffer
		if err := rep.WriteFormat(&buf, format); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), "reconcile/generation_tokens") {
			t.Errorf("the %s report does not name the failed check:\n%s", format, buf.String())
		}
	}
	var j JSONReport
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if j.ExitCode != 1 || !strings.Contains(j.Summary, wantName) {
		t.Errorf("gate.json: exit_code %d, summary %q; want 1 naming %s", j.ExitCode, j.Summary, wantName)
	}
}
