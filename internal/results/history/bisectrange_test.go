package history

import (
	"strings"
	"testing"
)

func TestBisectRange(t *testing.T) {
	t.Parallel()
	run := func(i int, image, version string, after bool) AroundRun {
		return AroundRun{RunRef: RunRef{Index: i, Image: image, VLLMVersion: version}, After: after}
	}
	for _, tc := range []struct {
		name   string
		around []AroundRun
		want   string
	}{
		{"two images", []AroundRun{run(6, "vllm/vllm-openai:v0.10.2", "0.10.2", false), run(7, "vllm/vllm-openai:v0.10.2", "0.10.2", false), run(8, "vllm/vllm-openai:v0.11.0", "0.11.0", true)},
			"bisect from vllm/vllm-openai:v0.10.2 (vLLM 0.10.2) (run 8, last before) to vllm/vllm-openai:v0.11.0 (vLLM 0.11.0) (run 9, first after): vllmperf bisect --candidates FILE"},
		{"one tag", []AroundRun{run(7, "vllm/vllm-openai:latest", "0.11.0", false), run(8, "vllm/vllm-openai:latest", "0.11.1", true)},
			"the same tag, another build under it; list the builds by digest"},
		{"same build", []AroundRun{run(7, "vllm/vllm-openai:v0.11.0", "0.11.0", false), run(8, "vllm/vllm-openai:v0.11.0", "0.11.0", true)},
			"runs 8 and 9 measured the same build (vllm/vllm-openai:v0.11.0 (vLLM 0.11.0)): the change is not a build's"},
		{"no run before", []AroundRun{run(0, "a", "", true)}, ""},
	} {
		c := Change{Around: tc.around}
		c.Run = tc.around[len(tc.around)-1].RunRef
		if got := c.BisectRange(); !strings.Contains(got, tc.want) || (tc.want == "") != (got == "") {
			t.Errorf("%s: %q, want it to say %q", tc.name, got, tc.want)
		}
	}
}
