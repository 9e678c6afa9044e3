package history

import (
	"slices"
	"testing"
)

// TestProvenanceEvents: a driver, CUDA or digest change between two runs
// of a key is an event; a run from before those lines were written is
// not a change.
func TestProvenanceEvents(t *testing.T) {
	t.Parallel()
	run := func(id string, config map[string]string) *Run {
		return &Run{Record: Record{ID: id, Config: config}}
	}
	kh := &KeyHistory{Runs: []*Run{
		run("r0", map[string]string{"image": "vllm/vllm-openai:latest"}),
		run("r1", map[string]string{"image": "vllm/vllm-openai:latest", "driver": "550.54.15", "cuda": "12.4", "image-digest": "vllm/vllm-openai@sha256:aaaa"}),
		run("r2", map[string]string{"image": "vllm/vllm-openai:latest", "driver": "570.86.10", "cuda": "12.8", "image-digest": "vllm/vllm-openai@sha256:bbbb"}),
	}}
	kh.events()
	var got []string
	for _, e := range kh.Events {
		got = append(got, e.RunID+" "+e.Text)
	}
	want := []string{
		"r2 image-digest vllm/vllm-openai@sha256:aaaa → vllm/vllm-openai@sha256:bbbb",
		"r2 driver 550.54.15 → 570.86.10",
		"r2 cuda 12.4 → 12.8",
	}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%q\nwant\n%q", got, want)
	}
}
