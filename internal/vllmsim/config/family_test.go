package config

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
)

// TestServeFlagsAreVLLMs: every vllm serve flag the simulator takes is one
// of vLLM's server family (the list profiles are checked against), and
// one it takes in a --no- form is negatable there too, so that a profile
// the harness accepts is a command line vLLM accepts, and the reverse for
// the flags both know.
func TestServeFlagsAreVLLMs(t *testing.T) {
	t.Parallel()
	fam := serverfamily.VLLM
	if len(serveFlags) == 0 {
		t.Fatal("no serve flags")
	}
	for _, f := range serveFlags {
		if !fam.IsKnownFlag(f.name) {
			t.Errorf("--%s: the simulator takes it, vLLM's family does not know it (internal/target/serverfamily/vllm.go)", f.name)
		}
		if f.kind == kindNegBool && !fam.IsNegatable(f.name) {
			t.Errorf("--%s: the simulator takes --no-%s, vLLM's family does not list it as negatable", f.name, f.name)
		}
	}
}
