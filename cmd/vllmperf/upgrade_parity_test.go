package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpgradeGateParity runs the gate's output parity check end to end on
// the embedded simulator: NEW's greedy outputs changed by --sim-output-salt
// fail the upgrade (exit 1) with the identical share and the first
// differing token named; unchanged outputs pass (exit 0). Two pairs of one
// quick point, decided by a thresholds file with min_samples 2.
func TestUpgradeGateParity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, newArgs string
		code          int
		stdout        []string
		stderr        []string
	}{
		{name: "salted", newArgs: "--sim-slowdown 0.25 --sim-output-salt 7", code: 1,
			stdout: []string{"parity: 0 of 8 greedy outputs identical (0%); first differing token at position", "8 of 8 differ before token 8: FAIL"},
			stderr: []string{"output parity: 100% of the greedy outputs (8 of 8) differ before token 8, above parity.max_early 25%"}},
		{name: "unchanged", newArgs: "--sim-slowdown 0.25", code: 0,
			stdout: []string{"parity: 8 of 8 greedy outputs identical (100%); 0 of 8 differ before token 8: PASS"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "gate")
			code, out, errOut := runUpgradeCLI(t, "--old", "in-process", "--new", "in-process",
				"--old-sim-args", "--sim-slowdown 0.25", "--new-sim-args", tc.newArgs,
				"--points", "profile=basic/scenario=ttft-tpot/prompt=short", "--size", "quick",
				"--min-pairs", "2", "--max-pairs", "2", "--thresholds", filepath.Join("testdata", "parity-two-pairs.yaml"),
				"--results", dir)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, tail(out), errOut)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, tail(out))
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			data, err := os.ReadFile(filepath.Join(dir, "parity.txt"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), "profile=basic/scenario=ttft-tpot/prompt=short/conc=1: ") {
				t.Errorf("parity.txt has no line for the point:\n%s", data)
			}
		})
	}
}
