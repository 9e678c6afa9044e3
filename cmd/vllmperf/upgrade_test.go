package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runUpgradeCLI runs `vllmperf upgrade-gate args...` with the job summary
// off unless args name one.
func runUpgradeCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	full := append([]string{"upgrade-gate"}, args...)
	if !strings.Contains(strings.Join(args, " "), "--step-summary") {
		full = append(full, "--step-summary=")
	}
	err := run(context.Background(), &out, &errOut, full)
	code = exitCode(err, &errOut)
	return code, out.String(), errOut.String()
}

// TestUpgradeGateUsage checks that bad settings stop the command before
// any server starts (exit 2), with a message that names the fix.
func TestUpgradeGateUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		// Both images are needed.
		{"no new", []string{"--old", "in-process"}, "upgrade-gate needs --old IMAGE and --new IMAGE"},
		// Simulator arguments for a vLLM image.
		{"sim args on vllm", []string{"--old", "vllm/vllm-openai:v0.10.2", "--new", "vllm/vllm-openai:v0.11.0", "--new-sim-args", "--sim-slowdown 1.1"},
			"NEW's simulator arguments (--sim-slowdown 1.1) need a simulator"},
		// The two sides on different backends.
		{"backends", []string{"--old", "in-process", "--new", "vllm/vllm-openai:v0.11.0"}, "OLD (in-process) runs on the sim backend"},
		// A point that does not exist.
		{"point", []string{"--old", "in-process", "--new", "in-process", "--points", "profile=basic/scenario=nope"}, `point "profile=basic/scenario=nope" matches none`},
		// An unknown lifecycle.
		{"servers", []string{"--old", "in-process", "--new", "in-process", "--servers", "both"}, `servers "both": want restart`},
		// A size that does not exist.
		{"size", []string{"--old", "in-process", "--new", "in-process", "--size", "tiny"}, `--size: size "tiny": want full`},
		// The cap under the start.
		{"pairs", []string{"--old", "in-process", "--new", "in-process", "--min-pairs", "10", "--max-pairs", "8"}, "max pairs 8 is below min pairs 10"},
		// An unknown format.
		{"format", []string{"--old", "in-process", "--new", "in-process", "--format", "html"}, `--format "html": want one of text, full, summary, markdown, json`},
		// A thresholds file that is not there.
		{"thresholds", []string{"--old", "in-process", "--new", "in-process", "--thresholds", "nope.yaml"}, "nope.yaml: no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append(tc.args, "--results", t.TempDir())
			code, _, errOut := runUpgradeCLI(t, args...)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstderr: %s", code, errOut)
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantErr, errOut)
			}
			if strings.Contains(errOut, "starting") {
				t.Errorf("a server started:\n%s", errOut)
			}
		})
	}
}

// TestUpgradeGateSimulator runs the command on the embedded simulator with
// a cap below what can decide: UNKNOWN (exit 3), the report on stdout, and
// the results folder and the job summary written.
func TestUpgradeGateSimulator(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "gate")
	summary := filepath.Join(t.TempDir(), "summary.md")
	fast := "--sim-slowdown 0.25" // a quarter of the preset's step time: a short test
	code, out, errOut := runUpgradeCLI(t, "--old", "in-process", "--new", "in-process",
		"--old-sim-args", fast, "--new-sim-args", fast,
		"--points", "profile=basic/scenario=ttft-tpot/prompt=short", "--size", "quick",
		"--min-pairs", "2", "--max-pairs", "2", "--results", dir, "--step-summary", summary)
	if code != 3 {
		t.Fatalf("exit %d, want 3\nstdout: %s\nstderr: %s", code, tail(out), errOut)
	}
	for _, want := range []string{"min_samples is 6", "UNKNOWN after 2 pairs: INCONCLUSIVE"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, tail(out))
		}
	}
	// 7: the 4 headline rows and the 3 judged tails (TTFT, TPOT, ITL P99).
	if want := "vllmperf: INCONCLUSIVE: UNKNOWN after 2 pairs: INCONCLUSIVE: 7 inconclusive; raise --max-pairs (now 2)"; !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
	if n := strings.Count(errOut, "pair 2/2"); n != 2 {
		t.Errorf("%d runs of pair 2, want one per side:\n%s", n, errOut)
	}
	data, err := os.ReadFile(filepath.Join(dir, "gate.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Decision string           `json:"decision"`
		Rows     []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(data, &rep); err != nil || rep.Decision != "UNKNOWN" || len(rep.Rows) == 0 {
		t.Errorf("gate.json: decision %q, %d rows, %v", rep.Decision, len(rep.Rows), err)
	}
	for _, f := range []string{"old.txt", "new.txt", "gate.txt", "old/summary.json", "new/summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	md, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	if want := "## Upgrade gate `in-process` → `in-process`: UNKNOWN\n\n2 pairs interleaved (compared once), 3 server starts."; !strings.Contains(string(md), want) {
		t.Errorf("job summary lacks %q:\n%s", want, md)
	}
}
