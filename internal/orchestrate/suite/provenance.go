package suite

import (
	"context"

	"github.com/vllmperf/vllmperf/internal/target/server"
)

// Provenance configuration keys (docs/bench-format.md): what a run ran on
// beyond the image's tag, so that a different build under one tag, a
// driver or CUDA change or an environment variable is seen, not taken for
// a regression (gate.ProvenanceKeys says which must match).
const (
	KeyImageDigest = "image-digest"
	KeyDriver      = "driver"
	KeyCUDA        = "cuda"
	KeyHostCPU     = "host-cpu"
	KeyServerEnv   = "server-env"
)

// notOnGPU is the driver and CUDA value of the simulator.
const notOnGPU = "none (simulator)"

// provenanceLines are the session's provenance configuration lines.
func provenanceLines(ctx context.Context, d server.Description) [][2]string {
	driver, cuda := server.Unknown, server.Unknown
	switch {
	case d.Simulator:
		driver, cuda = notOnGPU, notOnGPU
	case d.Backend == server.KindContainer:
		driver, cuda = server.LocalDriver(ctx)
	}
	return [][2]string{
		{KeyImageDigest, orUnknown(d.Digest)},
		{KeyDriver, driver},
		{KeyCUDA, cuda},
		{KeyHostCPU, server.HostCPU()},
		{KeyServerEnv, orUnknown(d.Env)},
	}
}

func orUnknown(s string) string {
	if s == "" {
		return server.Unknown
	}
	return s
}
