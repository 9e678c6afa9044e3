package upgrade

import (
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/target/server"
)

// InProcess is the Side.Image that selects the embedded simulator (no
// Docker), as the bench files' image line names it.
const InProcess = "in-process"

// Side is one of the two servers the gate compares.
type Side struct {
	// Image is a vLLM image reference (run with the container backend),
	// server.SimImage ("sim": the simulator's image, container backend) or
	// InProcess (the simulator in this process).
	Image string
	// SimArgs are --sim-* arguments for this side only, after the suite's
	// (VLLMPERF_SIM_ARGS, both sides). Simulators only.
	SimArgs []string
}

// The two sides, as indexes and as names in logs, files and errors.
const (
	oldSide = 0
	newSide = 1
)

var sideNames = [2]string{"old", "new"}

// simulator reports whether the side runs vllm-sim.
func (s Side) simulator() bool { return s.Image == InProcess || s.Image == server.SimImage }

// backend is the backend the side runs on.
func (s Side) backend() server.Kind {
	if s.Image == InProcess {
		return server.KindSim
	}
	return server.KindContainer
}

// serverOptions select the side's backend and image; they go after the
// environment's, so that they win.
func (s Side) serverOptions() []server.Option {
	if s.Image == InProcess {
		return []server.Option{server.WithBackend(server.KindSim)}
	}
	return []server.Option{server.WithBackend(server.KindContainer), server.WithImage(s.Image)}
}

// checkSides refuses sides that cannot be compared: no image, two
// backends, simulator arguments for a real vLLM image.
func checkSides(sides [2]Side) error {
	for i, s := range sides {
		if strings.TrimSpace(s.Image) == "" {
			return fmt.Errorf("%w: %s has no image: give a vLLM image (vllm/vllm-openai:v0.11.0), %q (the simulator's image) or %q (the embedded simulator)",
				ErrSettings, strings.ToUpper(sideNames[i]), server.SimImage, InProcess)
		}
		if len(s.SimArgs) > 0 && !s.simulator() {
			return fmt.Errorf("%w: %s's simulator arguments (%s) need a simulator, but %s is %s: drop them, or use %q or %q",
				ErrSettings, strings.ToUpper(sideNames[i]), strings.Join(s.SimArgs, " "), strings.ToUpper(sideNames[i]), s.Image, server.SimImage, InProcess)
		}
		for _, a := range s.SimArgs {
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(strings.TrimLeft(a, "-"), "sim-") {
				return fmt.Errorf("%w: %s's simulator arguments: %q is not a --sim-* flag (vLLM flags belong in the profile)",
					ErrSettings, strings.ToUpper(sideNames[i]), a)
			}
		}
	}
	if o, n := sides[oldSide], sides[newSide]; o.backend() != n.backend() {
		return fmt.Errorf("%w: OLD (%s) runs on the %s backend and NEW (%s) on the %s backend: compare two images, or two settings of the embedded simulator",
			ErrSettings, o.Image, o.backend(), n.Image, n.backend())
	}
	return nil
}
