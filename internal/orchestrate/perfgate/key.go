// Package perfgate is what the perf-gate workflow runs, as one command
// (`make perf-gate`, `vllmperf perf-gate`): plan the run (server starts,
// points, runs and their time from the last results on the same key; a
// time budget picks the count), skip a pull request that changes nothing
// measured, run the suite (`go test -bench Perf` into a results folder),
// then gate it against the baseline stored for its key — or, with none
// yet, record this run as that baseline and pass (outside a pull request;
// a pull request exits 3 saying how to get one). docs/gate.md and
// docs/gpu-runners.md describe it for people.
package perfgate

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
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

// The environment variables the key reads besides the suite's (package
// envvar declares them all).
var (
	// EnvRunner names the runner; default $RUNNER_NAME (GitHub Actions),
	// else the host name.
	EnvRunner = envvar.Runner.Name
)

// GitHub Actions' own variables (not ours: package envvar declares
// vllmperf's settings only): the runner's name, the event, whether this
// is Actions, and the commit.
const (
	envGHRunner  = "RUNNER_NAME"
	envGHEvent   = "GITHUB_EVENT_NAME"
	envGHActions = "GITHUB_ACTIONS"
	envGHSHA     = "GITHUB_SHA"
)

// KeyFromEnv builds the key of the run the environment configures: the
// suite's settings, each its default (envvar.Setting.Default) when unset.
func KeyFromEnv(ctx context.Context) Key {
	host, _ := os.Hostname()
	runner := cmp.Or(envvar.Runner.Get(), strings.TrimSpace(os.Getenv(envGHRunner)), host)
	k := Key{
		Runner:    runner,
		Backend:   envvar.Backend.Get(),
		Model:     envvar.Model.Get(),
		Size:      envvar.Size.Get(),
		Profiles:  envvar.Profiles.Get(),
		Scenarios: envvar.Scenarios.Get(),
	}
	k.Image = "in-process"
	if k.Backend == string(server.KindContainer) {
		k.Image = cmp.Or(envvar.Image.Get(), server.DefaultImage)
	}
	k.GPU = envvar.GPUName.Get()
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
