package perfgate

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// EnvGate names a gate preset (GatePresets): pr, the pull-request gate's
// default, or full, the whole suite (the nightly gate, and what an unset
// variable runs). A preset fills in only what is unset: VLLMPERF_COUNT,
// VLLMPERF_PROFILES, VLLMPERF_SIZE and VLLMPERF_STARTS given by hand win
// (its starts are not filled in beside VLLMPERF_GPU_SETS or
// VLLMPERF_SEQUENTIAL, which run processes of their own).
var EnvGate = envvar.Gate.Name

// GatePreset is what a named gate runs.
type GatePreset struct {
	Name string
	// Profiles are the profiles it runs (nil: every built-in one), at
	// Size, every default scenario, Count runs a point.
	Profiles []string
	Size     scenario.Size
	Count    int
	// Starts is the server starts a side (VLLMPERF_STARTS; 0 or 1: one
	// go test process).
	Starts int
	// Doc says what it is for.
	Doc string
}

// PRGate is the pull-request gate's default: chosen from the predicted
// GPU time (package predict, the H100 preset) and the power measured on
// the design perf-gate runs (internal/orchestrate/upgrade's
// TestFiguresPRGate, docs/gpu-runners.md "The PR gate"): three profiles
// at quick size, count 10 (the count the gate needs to decide over their
// tests; the sequential count saves nothing on unchanged code, the usual
// pull request), on 5 server starts a side (VLLMPERF_STARTS: one start a
// side caught +5% in 70%, under the 80% target; five cost no more starts
// or runs).
var PRGate = GatePreset{Name: "pr", Profiles: []string{"basic", "high-throughput", "low-latency"}, Size: scenario.Quick, Count: 10, Starts: 5,
	Doc: "the pull-request gate: basic, high-throughput and low-latency at quick size, count 10 on 5 server starts a side (under an hour of one H100, predicted)"}

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
		set := func(s envvar.Setting, value string) error {
			if _, ok := s.Lookup(); ok { // by hand, under its name or its old one
				return nil
			}
			return os.Setenv(s.Name, value)
		}
		err := set(envvar.Count, strconv.Itoa(p.Count))
		if err == nil {
			err = set(envvar.Size, string(p.Size))
		}
		if err == nil && p.Profiles != nil {
			err = set(envvar.Profiles, strings.Join(p.Profiles, ","))
		}
		if err == nil && p.Starts > 1 && strings.TrimSpace(os.Getenv(envvar.GPUSets.Name)) == "" && strings.TrimSpace(os.Getenv(envvar.Sequential.Name)) == "" {
			err = set(envvar.Starts, strconv.Itoa(p.Starts)) // not with what runs its own processes (checkStarts)
		}
		return name, err
	}
	return "", fmt.Errorf("%s=%q: want one of %s (or unset for the whole suite)", EnvGate, name, strings.Join(names, ", "))
}
