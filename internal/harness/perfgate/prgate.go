package perfgate

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/vllmperf/vllmperf/internal/harness/envvar"
	"github.com/vllmperf/vllmperf/internal/harness/scenario"
)

// EnvGate names a gate preset (GatePresets): pr, the pull-request gate's
// default, or full, the whole suite (the nightly gate, and what an unset
// variable runs). A preset fills in only what is unset: COUNT,
// VLLMPERF_PROFILES and VLLMPERF_SIZE given by hand win.
var EnvGate = envvar.Gate.Name

// GatePreset is what a named gate runs.
type GatePreset struct {
	Name string
	// Profiles are the profiles it runs (nil: every built-in one), at
	// Size, every default scenario, Count runs a point.
	Profiles []string
	Size     scenario.Size
	Count    int
	// Doc says what it is for.
	Doc string
}

// PRGate is the pull-request gate's default: chosen from the predicted
// GPU time (package predict, the H100 preset) and the power measured on
// the committed gate-quality pools gated in its shape
// (internal/harness/upgrade's TestFiguresPRGate, docs/gpu-runners.md
// "The PR gate"): three profiles at quick size, count 10 (the count the
// gate needs to decide over their tests; the sequential count saves
// nothing on unchanged code, the usual pull request).
var PRGate = GatePreset{Name: "pr", Profiles: []string{"basic", "high-throughput", "low-latency"}, Size: scenario.Quick, Count: 10,
	Doc: "the pull-request gate: basic, high-throughput and low-latency at quick size, count 10 (under an hour of one H100, predicted)"}

// FullGate is the whole suite at full size, count 10: the nightly gate.
var FullGate = GatePreset{Name: "full", Size: scenario.Full, Count: 10,
	Doc: "the whole suite: every profile and default scenario at full size, count 10 (the nightly gate)"}

// GatePresets are the gates EnvGate names.
var GatePresets = []GatePreset{PRGate, FullGate}

// applyGatePreset reads EnvGate and sets the variables its preset fills
// in that are unset (the suite's go test and suite.FromEnv read them from
// the environment); it returns the preset's name, "" when EnvGate is
// unset.
func applyGatePreset() (string, error) {
	name := strings.TrimSpace(os.Getenv(EnvGate))
	if name == "" {
		return "", nil
	}
	var names []string
	for _, p := range GatePresets {
		names = append(names, p.Name)
		if p.Name != name {
			continue
		}
		set := func(v, value string) error {
			if strings.TrimSpace(os.Getenv(v)) != "" {
				return nil
			}
			return os.Setenv(v, value)
		}
		err := set(envvar.Count.Name, strconv.Itoa(p.Count))
		if err == nil {
			err = set(envvar.Size.Name, string(p.Size))
		}
		if err == nil && p.Profiles != nil {
			err = set(envvar.Profiles.Name, strings.Join(p.Profiles, ","))
		}
		return name, err
	}
	return "", fmt.Errorf("%s=%q: want one of %s (or unset for the whole suite)", EnvGate, name, strings.Join(names, ", "))
}
