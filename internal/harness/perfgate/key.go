// Package perfgate is what the perf-gate workflow runs, as one command
// (`make perf-gate`, `vllmperf perf-gate`): plan the run (server starts,
// points, runs and their time from the last results on the same key; a
// time budget picks the count), skip a pull request that changes nothing
// measured, run the suite (`go test -bench Perf` into a results folder),
// then gate it against the baseline stored for its key — or, with none
// yet, record this run as that baseline and pass. docs/gate.md and
// docs/gpu-runners.md describe it for people.
package perfgate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/vllmperf/vllmperf/internal/harness/server"
)

// Key is what makes two runs comparable: the same runner (machine), GPU,
// backend, image, model, size, profiles and scenarios. Simulator
// arguments (VLLMPERF_SIM_ARGS) are not part of it: a slowed simulator is
// gated against the same baseline, which is how the gate is tested.
type Key struct {
	Runner    string `json:"runner"`
	GPU       string `json:"gpu"`
	Backend   string `json:"backend"`
	Image     string `json:"image"`
	Model     string `json:"model"`
	Size      string `json:"size"`
	Profiles  string `json:"profiles"`
	Scenarios string `json:"scenarios"`
}

// The environment variables the key reads besides the suite's.
const (
	// EnvRunner names the runner; default $RUNNER_NAME (GitHub Actions),
	// else the host name.
	EnvRunner   = "VLLMPERF_RUNNER"
	envGHRunner = "RUNNER_NAME"
)

// KeyFromEnv builds the key of the run the environment configures.
func KeyFromEnv(ctx context.Context) Key {
	get := func(name, def string) string {
		if v := strings.TrimSpace(os.Getenv(name)); v != "" {
			return v
		}
		return def
	}
	host, _ := os.Hostname()
	k := Key{
		Runner:    get(EnvRunner, get(envGHRunner, host)),
		Backend:   get("VLLMPERF_BACKEND", string(server.KindSim)),
		Model:     get("VLLMPERF_MODEL", "default"),
		Size:      get("VLLMPERF_SIZE", "full"),
		Profiles:  get("VLLMPERF_PROFILES", "all"),
		Scenarios: get("VLLMPERF_SCENARIOS", "all"),
	}
	k.Image = "in-process"
	if k.Backend == string(server.KindContainer) {
		k.Image = get("VLLMPERF_IMAGE", server.DefaultImage)
	}
	k.GPU = get("VLLMPERF_GPU_NAME", "")
	if k.GPU == "" {
		k.GPU = "none"
		if k.Backend == string(server.KindContainer) && k.Image != server.SimImage {
			if g := server.LocalGPUs(ctx); g != "" {
				k.GPU = g
			}
		}
	}
	return k
}

// String is the key as a person reads it.
func (k Key) String() string {
	return fmt.Sprintf("runner=%s gpu=%q backend=%s image=%s model=%s size=%s profiles=%s scenarios=%s",
		k.Runner, k.GPU, k.Backend, k.Image, k.Model, k.Size, k.Profiles, k.Scenarios)
}

var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Slug names the key's folder in the store: readable parts and a hash
// of the whole key (so that no two keys share a folder).
func (k Key) Slug() string {
	sum := sha256.Sum256([]byte(k.String()))
	readable := unsafe.ReplaceAllString(strings.Join([]string{k.Runner, k.Backend, k.Size, k.Profiles}, "_"), "-")
	if len(readable) > 80 {
		readable = readable[:80]
	}
	return readable + "_" + hex.EncodeToString(sum[:6])
}
