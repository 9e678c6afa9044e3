package bisect

import (
	"errors"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/orchestrate/upgrade"
)

func TestParseCandidates(t *testing.T) {
	t.Parallel()
	got, err := ParseCandidates("c.txt", []byte("# nightly builds\nvllm/vllm-openai:v0.10.2\n\nvllm/vllm-openai@sha256:abc  # a per-commit build\nvllm/vllm-openai:v0.11.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Line != 2 || got[1].Line != 4 || got[1].Side.Image != "vllm/vllm-openai@sha256:abc" || got[2].Name() != "line 5 (vllm/vllm-openai:v0.11.0)" {
		t.Errorf("candidates %+v", got)
	}
	sim, err := ReadCandidates("testdata/sim-8.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(sim) != 8 || sim[4].Side.Image != upgrade.InProcess || strings.Join(sim[4].Side.SimArgs, " ") != "--sim-slowdown 1.25" || len(sim[0].Side.SimArgs) != 0 {
		t.Errorf("simulator candidates %+v", sim)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"one build", "vllm/vllm-openai:v0.11.0\n", "has 1 builds: give at least 2"},
		{"two words", "vllm/vllm-openai:v0.10.2\nvllm/vllm-openai v0.11.0\n", `c.txt:2: "vllm/vllm-openai v0.11.0": one image reference a line`},
		{"mixed", "sim\nvllm/vllm-openai:v0.11.0\n", "c.txt:2: vllm/vllm-openai:v0.11.0 mixes the embedded simulator with images (line 1 is sim)"},
		{"vllm flag", "sim\nsim --max-num-seqs 8\n", `c.txt:2: "--max-num-seqs" is not a --sim-* flag`},
	} {
		_, err := ParseCandidates("c.txt", []byte(tc.text))
		if !errors.Is(err, ErrCandidates) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want one saying %q", tc.name, err, tc.want)
		}
	}
	if _, err := ReadCandidates("testdata/none.txt"); !errors.Is(err, ErrCandidates) {
		t.Errorf("a missing file: %v", err)
	}
}
