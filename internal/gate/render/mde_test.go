package render

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
)

// TestMinimumEffectsRendered: the text and JSON reports carry every
// judged metric's minimum detectable effect of each profile.
func TestMinimumEffectsRendered(t *testing.T) {
	t.Parallel()
	got, err := gate.Compare(readBench(t, "base.txt"), readBench(t, "noise.txt"), loadThresholds(t, "thresholds.yaml"), gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.MinimumEffects) == 0 {
		t.Fatal("no minimum effects to render")
	}
	rep := Of(got)
	var text, js bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "minimum detectable effects") || !strings.Contains(text.String(), "basic at 10 runs a side: ") || !strings.Contains(text.String(), " ttft-p50-ns ") {
		t.Errorf("the text report lacks the minimum detectable effects:\n%s", text.String())
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var j JSONReport
	if err := json.Unmarshal(js.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	if len(j.MinimumEffects) != len(rep.MinimumEffects) || j.MinimumEffects[0].MDEPct == nil {
		t.Errorf("gate.json minimum_effects: %+v", j.MinimumEffects)
	}
}
