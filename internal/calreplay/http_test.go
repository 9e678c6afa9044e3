package calreplay

import (
	"slices"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// TestHTTPRowsCoverEveryModelPreset: the HTTP path has one row per model
// preset of the simulator, each on the chat or completions endpoint and on
// the server of a replayable calibration row of its own model (or the
// defaults), so that a preset added without one fails here rather than
// going untested through the API.
func TestHTTPRowsCoverEveryModelPreset(t *testing.T) {
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	replayable := map[string]calibration.Row{}
	for _, rp := range Replayable(rows) {
		replayable[rp.Row.ID] = rp.Row
	}
	var models []string
	ids := map[string]bool{}
	for _, r := range HTTPRows {
		models = append(models, r.Model)
		if ids[r.ID()] {
			t.Errorf("HTTP row id %s twice", r.ID())
		}
		ids[r.ID()] = true
		if r.Endpoint != calibration.EndpointChat && r.Endpoint != calibration.EndpointCompletions {
			t.Errorf("%s: endpoint %q, want chat or completions", r.ID(), r.Endpoint)
		}
		if r.Setup == "" {
			continue
		}
		src, ok := replayable[r.Setup]
		switch {
		case !ok:
			t.Errorf("%s: setup %s is no replayable calibration row", r.ID(), r.Setup)
		case src.Model.Preset != r.Model:
			t.Errorf("%s: setup %s serves %s", r.ID(), r.Setup, src.Model.Preset)
		}
	}
	slices.Sort(models)
	// The text generation presets: a pooling preset serves /v1/embeddings
	// only, and the vision preset's images have no published figure to
	// calibrate against (their own tests: internal/vllmsim embeddings_test.go
	// and images_test.go).
	want := slices.DeleteFunc(presets.ModelPresetNames(), func(n string) bool {
		m, _ := presets.LookupModel(n)
		return m.Pooling || m.Vision != nil
	})
	if !slices.Equal(models, want) {
		t.Errorf("HTTP rows serve %v, want one row for each text generation preset %v", models, want)
	}
}
