package vllmsim

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
)

// TestOutputSalt checks --sim-output-salt: greedy outputs keep their first
// tokens and differ from a position inside OutputSaltWindow, with the same
// length (words after it may match by chance: the detokenizer's word list
// is shorter than the vocabulary); without the salt, or with the same salt on another start,
// they are the same; a sampled output is left alone.
func TestOutputSalt(t *testing.T) {
	t.Parallel()
	plain, salted, again := startSim(t), startSim(t, "--sim-output-salt", "7"), startSim(t, "--sim-output-salt", "7", "--sim-seed", "3")
	complete := func(m *sim, prompt string, temp float64) string {
		t.Helper()
		body := fmt.Sprintf(`{"prompt": %q, "max_tokens": 24, "ignore_eos": true, "temperature": %g}`, prompt, temp)
		code, b := m.post(t, "/v1/completions", body)
		if code != 200 {
			t.Fatalf("POST /v1/completions: %d %s", code, b)
		}
		var r struct {
			Choices []struct{ Text string } `json:"choices"`
		}
		if err := json.Unmarshal(b, &r); err != nil || len(r.Choices) != 1 {
			t.Fatalf("answer %s: %v", b, err)
		}
		return r.Choices[0].Text
	}
	froms := map[int]bool{}
	for i := range 12 {
		prompt := fmt.Sprintf("the parity prompt number %d of the test", i)
		want := strings.Fields(complete(plain, prompt, 0))
		got := strings.Fields(complete(salted, prompt, 0))
		if len(got) != len(want) || len(want) != 24 {
			t.Fatalf("prompt %d: %d tokens salted, %d plain: want 24 each", i, len(got), len(want))
		}
		from := -1
		for k := range want {
			if got[k] != want[k] {
				from = k
				break
			}
		}
		if from < 0 || from >= config.OutputSaltWindow {
			t.Errorf("prompt %d: first differing token at %d, want one in [0, %d)", i, from, config.OutputSaltWindow)
		}
		froms[from] = true
		if other := strings.Fields(complete(again, prompt, 0)); strings.Join(other, " ") != strings.Join(got, " ") {
			t.Errorf("prompt %d: the same salt on another start (another --sim-seed) gave another output", i)
		}
	}
	if len(froms) < 3 {
		t.Errorf("divergence positions %v: want them spread over the window", froms)
	}
	// A sampled request keeps the server's seed's output: with the same
	// --sim-seed, the salt changes nothing.
	sampledPlain, sampledSalted := startSim(t, "--sim-seed", "5"), startSim(t, "--sim-seed", "5", "--sim-output-salt", "7")
	if a, b := complete(sampledPlain, "a sampled prompt", 1), complete(sampledSalted, "a sampled prompt", 1); a != b {
		t.Errorf("sampled output changed by the salt:\n%s\n%s", a, b)
	}
}
