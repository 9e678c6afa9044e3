package vllmsim

import (
	"errors"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
)

// TestEngineConfigErrors: configurations only the engine can judge come
// back from New as *ArgError naming the problem.
func TestEngineConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		// A GPU preset that does not exist: the engine's rule, in argparse's words.
		{"unknown gpu", []string{"--sim-gpu", "tpu-v9"}, "argument --sim-gpu: unknown GPU preset 'tpu-v9'"},
		// Without chunked prefill a whole prompt must fit one step.
		{"batched tokens below context", []string{"--no-enable-chunked-prefill", "--max-num-batched-tokens", "512", "--max-model-len", "4096"}, "invalid engine configuration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := New(tt.args, nil)
			if err == nil {
				_ = s.Close()
				t.Fatalf("New(%q) succeeded", tt.args)
			}
			var ae *config.ArgError
			if !errors.As(err, &ae) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New(%q) = %v, want an *ArgError containing %q", tt.args, err, tt.want)
			}
		})
	}
}
