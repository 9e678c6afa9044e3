package vllmsim_test

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is this module's import path.
const module = "github.com/vllmperf/vllmperf"

// sharedUtilities are the module's packages outside internal/vllmsim the
// simulator may use: small leaves of no area, shared by the whole module.
var sharedUtilities = map[string]string{
	module + "/internal/suggest":    "the did-you-mean hint for an unknown flag or value",
	module + "/internal/strictyaml": "strict YAML decoding of the calibration data (internal/vllmsim/calibration)",
}

// TestSimulatorStandsAlone: the simulator (internal/vllmsim/... and the
// vllm-sim command) builds from its own packages and sharedUtilities only,
// none of the harness. The calibration replay (internal/calreplay) is not
// part of it: it may import the harness.
func TestSimulatorStandsAlone(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", module+"/internal/vllmsim/...", module+"/cmd/vllm-sim").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	own := 0
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case !strings.HasPrefix(pkg, module+"/"):
			continue // the standard library and third-party modules
		case pkg == module+"/cmd/vllm-sim", pkg == module+"/internal/vllmsim", strings.HasPrefix(pkg, module+"/internal/vllmsim/"):
			own++
		case sharedUtilities[pkg] != "":
		default:
			t.Errorf("the simulator depends on %s: only internal/vllmsim/..., cmd/vllm-sim and the shared utilities (%s) may be (move what it needs into internal/vllmsim, or list a small shared leaf in sharedUtilities with why)",
				pkg, strings.Join(utilityNames(), ", "))
		}
	}
	if own < 3 {
		t.Fatalf("go list -deps listed %d of the simulator's packages, want its packages and the command:\n%s", own, out)
	}
}

// utilityNames are sharedUtilities' paths in the module, sorted.
func utilityNames() []string {
	var names []string
	for _, p := range slices.Sorted(maps.Keys(sharedUtilities)) {
		names = append(names, strings.TrimPrefix(p, module+"/"))
	}
	return names
}
