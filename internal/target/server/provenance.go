package server

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/vllmperf/vllmperf/internal/target/profile"
)

// The values of Description's provenance where nothing can be known.
const (
	// NoDigest is Description.Digest for a server that runs no image.
	NoDigest = "none"
	// Unknown is a value that could not be read.
	Unknown = "unknown"
)

// digestTimeout bounds the image inspection.
const digestTimeout = 10 * time.Second

// imageDigest is the digest ref resolved to: its repository digest
// (vllm/vllm-openai@sha256:...), or the image id (sha256:...) for an
// image built here and never pushed; Unknown when Docker does not say.
func imageDigest(ctx context.Context, ref string) string {
	ctx, cancel := context.WithTimeout(ctx, digestTimeout)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return Unknown
	}
	defer cli.Close()
	res, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		return Unknown
	}
	if len(res.RepoDigests) > 0 {
		ds := slices.Clone(res.RepoDigests)
		slices.Sort(ds)
		return ds[0]
	}
	if res.ID != "" {
		return res.ID
	}
	return Unknown
}

// ProvenanceEnvPrefixes are the prefixes of the environment variables
// that shape a vLLM server's speed and are recorded with every run:
// vLLM's own and OpenMP's (a missing OMP_NUM_THREADS has been taken for
// a regression, vllm#42096).
var ProvenanceEnvPrefixes = []string{"VLLM_", "OMP_"}

// secretWords mark an environment variable's name as a secret's: its
// value is never recorded or printed.
var secretWords = []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"}

// Redacted is what a secret's value is shown as.
const Redacted = "[REDACTED]"

// LooksSecret reports whether an environment variable's name looks like
// a token's or a key's.
func LooksSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// ProvenanceEnv keeps env's VLLM_* and OMP_* variables, secrets masked,
// as a sorted "K=V K=V" line; "(none)" when there are none.
func ProvenanceEnv(env map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		if !hasPrefix(k, ProvenanceEnvPrefixes) {
			continue
		}
		v := env[k]
		if LooksSecret(k) {
			v = Redacted
		}
		out = append(out, k+"="+v)
	}
	if len(out) == 0 {
		return "(none)"
	}
	return strings.Join(out, " ")
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// processEnv is this process's environment as a map: the in-process
// simulator's.
func processEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

// containerEnv is the environment a container request sets.
func (r containerRequest) containerEnv() map[string]string {
	env := map[string]string{}
	for k, v := range r.env {
		env[k] = string(v)
	}
	return env
}

// describeProvenance fills d's provenance for a container of req.
func describeContainer(ctx context.Context, d *Description, req containerRequest) {
	d.Digest = imageDigest(ctx, req.image)
	d.Env = ProvenanceEnv(req.containerEnv())
}

// applyEnv sets the profile's env: in the container.
func (r *containerRequest) applyEnv(p profile.Profile) {
	for _, e := range p.Env {
		r.env[e.Name] = secret(e.Value)
	}
}

// simEnv is the in-process simulator's environment: this process's, with
// the profile's env: over it (the simulator reads none of them but
// VLLM_TORCH_PROFILER_DIR; they are recorded all the same).
func simEnv(p profile.Profile) map[string]string {
	env := processEnv()
	for _, e := range p.Env {
		env[e.Name] = e.Value
	}
	return env
}

// refuseEnv refuses a profile's env: for the external backend.
func refuseEnv(p profile.Profile) error {
	if len(p.Env) == 0 {
		return nil
	}
	names := make([]string, len(p.Env))
	for i, e := range p.Env {
		names[i] = e.Name
	}
	return settingsErrorf("profile %s sets env: (%s), but the external backend reaches a server that is already running, whose environment is its own: set them where that server is started, or run the profile with the container backend", p.Name, strings.Join(names, ", "))
}
