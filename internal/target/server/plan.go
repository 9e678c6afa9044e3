package server

import (
	"maps"
	"slices"

	"github.com/vllmperf/vllmperf/internal/target/profile"
)

// Plan is the container the container backend would start for a profile:
// a dry run of Run that touches no Docker, so that a new server family
// (or a user) can see its launch before it runs.
type Plan struct {
	// Image is the image reference (the family's Image unless one was
	// chosen; SimImage before the simulator image is built).
	Image string
	// Entrypoint replaces the image's ENTRYPOINT; nil keeps the image's.
	Entrypoint []string
	// Cmd is the command line after the entrypoint: the family's launch
	// layout with the profile's flags.
	Cmd []string
	// EnvNames are the container's environment variables, sorted; their
	// values stay out (a token is among them).
	EnvNames []string
}

// PlanContainer lays out the container Run would start for p with opts
// and the container backend; its error is Run's for bad settings (an
// unknown launch layout, say).
func PlanContainer(p profile.Profile, opts ...Option) (Plan, error) {
	s := defaultSettings()
	for _, o := range append(slices.Clone(opts), WithBackend(KindContainer)) {
		o(&s)
	}
	if err := s.validate(); err != nil {
		return Plan{}, err
	}
	r, err := buildRequest(s, p)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Image: r.image, Entrypoint: r.entrypoint, Cmd: r.cmd, EnvNames: slices.Sorted(maps.Keys(r.env))}, nil
}
