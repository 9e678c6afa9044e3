package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

// gateData is the gate package's generated fixtures.
const gateData = "../../internal/gate/testdata"

func benchFile(name string) string { return filepath.Join(gateData, "bench", name) }

// runGateCLI runs `vllmperf gate args...`. Unless args name one, it adds
// --step-summary= so that a test under GitHub Actions never writes the job
// summary.
func runGateCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	full := append([]string{"gate"}, args...)
	if !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--step-summary") }) {
		full = append(full, "--step-summary=")
	}
	err := run(context.Background(), &out, &errOut, full)
	code = exitCode(err, &errOut)
	return code, out.String(), errOut.String()
}

// TestGateExitCodes checks the exit status of each outcome and that the
// messages name what is wrong.
func TestGateExitCodes(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	thr := filepath.Join(gateData, "thresholds.yaml")
	for _, tc := range []struct {
		name     string
		args     []string
		want     int
		wantOut  string // part of stdout
		wantErr  string // part of stderr
		notInErr string
	}{
		// A clear regression fails.
		{"regression", []string{"--baseline", benchFile("base.txt"), "--new", benchFile("regression.txt"), "--thresholds", thr},
			1, "REGRESSION", "vllmperf: FAIL: 4 regressions", ""},
		// Noise passes.
		{"noise", []string{"--baseline", benchFile("base.txt"), "--new", benchFile("noise.txt"), "--thresholds", thr},
			0, "PASS: 36 unchanged (exit 0)", "", "vllmperf:"},
		// An improvement passes.
		{"improvement", []string{"--baseline", benchFile("base.txt"), "--new", benchFile("improvement.txt"), "--thresholds", thr},
			0, "IMPROVEMENT", "", "vllmperf:"},
		// A throughput drop fails: higher is better for tok/s.
		{"throughput drop", []string{"--baseline", benchFile("base.txt"), "--new", benchFile("throughput-drop.txt"), "--thresholds", thr},
			1, "tok/s", "regressions", ""},
		// Three runs a side are inconclusive, and the message says how many would do:
		// 6, min_samples (the exact U test passes the correction's first step over the profile's 21 rows from 6).
		{"three samples", []string{"--baseline", benchFile("base-3.txt"), "--new", benchFile("new-3.txt"), "--thresholds", thr},
			3, "min_samples is 6", "vllmperf: INCONCLUSIVE: 36 inconclusive; about 6 runs a side would decide (go test -count 6)", ""},
		// The summary format counts the rows short of runs once.
		{"summary", []string{"--baseline", benchFile("base-3.txt"), "--new", benchFile("new-3.txt"), "--thresholds", thr, "--format", "summary"},
			3, "36 rows are INCONCLUSIVE for too few runs (3 in the baseline, 3 in the new results; min_samples 6): run at least 6 a side (-count 6)", "vllmperf: INCONCLUSIVE", ""},
		// Another GPU is refused, naming the key and both values.
		{"mismatched gpu", []string{"--baseline", benchFile("base.txt"), "--new", benchFile("other-gpu.txt"), "--thresholds", thr},
			2, "", `gpu is "sim:rtx4090" in ` + benchFile("base.txt") + ` but "sim:h100" in ` + benchFile("other-gpu.txt"), ""},
		// --force compares anyway and says so.
		{"forced gpu", []string{"--baseline", benchFile("base.txt"), "--new", benchFile("other-gpu.txt"), "--thresholds", thr, "--force"},
			0, `warning: --force: gpu is "sim:rtx4090"`, "", "vllmperf:"},
		// A profile the baseline lacks is not compared, and said so.
		{"new profile", []string{"--baseline", benchFile("base.txt"), "--new", benchFile("two-profiles.txt"), "--thresholds", thr},
			0, "new profile(s) low-latency: not in the baseline", "", "vllmperf:"},
		// A profile the new results lack is refused, named.
		{"missing profile", []string{"--baseline", benchFile("two-profiles.txt"), "--new", benchFile("base.txt"), "--thresholds", thr},
			2, "", `the profiles differ: "basic", "low-latency" in ` + benchFile("two-profiles.txt") + `, "basic" in ` + benchFile("base.txt") + `: the new results lack the baseline's profile(s) low-latency`, ""},
		// A broken thresholds.yaml names its line and column.
		{"broken thresholds", []string{"--baseline", benchFile("base.txt"), "--new", benchFile("noise.txt"), "--thresholds", filepath.Join(gateData, "broken.yaml")},
			2, "", `broken.yaml:5:12: unknown key "min_efect" (did you mean "min_effect"?)`, ""},
		// A thresholds file that is not there.
		{"missing thresholds", []string{"--baseline", benchFile("base.txt"), "--new", benchFile("noise.txt"), "--thresholds", "nope.yaml"},
			2, "", "nope.yaml: no such file", ""},
		// An unreadable results file.
		{"missing file", []string{"--baseline", benchFile("base.txt"), "--new", "nope.txt"},
			2, "", "read benchmark results: open nope.txt: no such file", ""},
		// A file that is not benchmark output.
		{"not bench output", []string{"--baseline", benchFile("base.txt"), "--new", filepath.Join(gateData, "thresholds.yaml")},
			2, "", "no benchmark results", ""},
		// No --new at all.
		{"no new", []string{"--baseline", benchFile("base.txt")},
			2, "", "gate needs --baseline FILE and --new FILE", ""},
		// An unknown format.
		{"bad format", []string{"--baseline", benchFile("base.txt"), "--new", benchFile("noise.txt"), "--format", "html"},
			2, "", `--format "html": want one of text, full, summary, markdown, json`, ""},
		// A misspelt flag, with the flag meant.
		{"unknown flag", []string{"--baseline", benchFile("base.txt"), "--nwe", benchFile("noise.txt")},
			2, "", "unknown flag: --nwe: did you mean --new?", ""},
		// benchstat's form: OLD NEW, the baseline first.
		{"positional", []string{benchFile("base.txt"), benchFile("regression.txt"), "--thresholds", thr},
			1, "vs " + benchFile("regression.txt") + " (new)", "vllmperf: FAIL: 4 regressions", ""},
		// One positional file, or files given both ways, are refused.
		{"one positional", []string{benchFile("base.txt")},
			2, "", "gate got one file", ""},
		{"positional and flags", []string{benchFile("base.txt"), benchFile("noise.txt"), "--new", benchFile("noise.txt")},
			2, "", "give them one way", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runGateCLI(t, tc.args...)
			if code != tc.want {
				t.Errorf("exit %d, want %d\nstdout tail: %s\nstderr: %s", code, tc.want, tail(out), errOut)
			}
			if !strings.Contains(out, tc.wantOut) {
				t.Errorf("stdout lacks %q:\n%s", tc.wantOut, tail(out))
			}
			if !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantErr, errOut)
			}
			if tc.notInErr != "" && strings.Contains(errOut, tc.notInErr) {
				t.Errorf("stderr has %q:\n%s", tc.notInErr, errOut)
			}
		})
	}
}

// TestGateJSON checks the JSON report's shape: one object per row with the
// fields CI tooling reads.
func TestGateJSON(t *testing.T) {
	t.Parallel()
	code, out, _ := runGateCLI(t, "--baseline", benchFile("base.txt"), "--new", benchFile("regression.txt"),
		"--thresholds", filepath.Join(gateData, "thresholds.yaml"), "--format", "json")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	var rep struct {
		Result   string `json:"result"`
		ExitCode int    `json:"exit_code"`
		Decision string `json:"decision"`
		Rows     []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, tail(out))
	}
	if rep.Result != "FAIL" || rep.ExitCode != 1 || rep.Decision != "DIFFERENT" {
		t.Errorf("result %q, exit_code %d, decision %q; want FAIL, 1, DIFFERENT", rep.Result, rep.ExitCode, rep.Decision)
	}
	regressions := 0
	for _, row := range rep.Rows {
		for _, key := range []string{"name", "unit", "baseline_median", "new_median", "delta_pct", "p", "p_holm", "verdict",
			"baseline_ci", "new_ci", "baseline_n", "new_n", "direction", "reason"} {
			if _, ok := row[key]; !ok {
				t.Fatalf("row %v lacks %q", row["name"], key)
			}
		}
		if row["verdict"] == "REGRESSION" {
			regressions++
			if row["unit"] != "ttft-p50-ns" && row["unit"] != "ttft-p99-ns" {
				t.Errorf("unexpected regression in %v %v", row["name"], row["unit"])
			}
		}
	}
	if regressions != 4 {
		t.Errorf("%d REGRESSION rows, want 4 (TTFT p50 and p99 at conc=16 and 32: the profile's TTFT p99 test finds it worse, its rows name the points)", regressions)
	}
}

// TestGateStepSummary checks that the markdown report is appended to
// $GITHUB_STEP_SUMMARY, keeping what earlier steps wrote.
func TestGateStepSummary(t *testing.T) {
	summary := filepath.Join(t.TempDir(), "summary.md")
	if err := os.WriteFile(summary, []byte("## earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(StepSummaryEnv, summary)
	var out, errOut bytes.Buffer
	err := run(context.Background(), &out, &errOut, []string{"gate", "--baseline", benchFile("base.txt"), "--new", benchFile("throughput-drop.txt"),
		"--thresholds", filepath.Join(gateData, "thresholds.yaml")})
	code := exitCode(err, &errOut)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if strings.Contains(out.String(), "### ") {
		t.Error("stdout has the markdown report; --format text was asked")
	}
	got, err := os.ReadFile(summary)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## earlier step\n### ❌ vllmperf gate: FAIL", "| tok/s |", "REGRESSION"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("step summary lacks %q:\n%s", want, got)
		}
	}
}

func tail(s string) string {
	if len(s) > 1500 {
		return "..." + s[len(s)-1500:]
	}
	return s
}

// TestGateJSONFile checks --json: the text report on stdout and the JSON
// report (what make bench saves as gate.json) in the file, both with the
// same outcome.
func TestGateJSONFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "gate.json")
	code, out, _ := runGateCLI(t, "--baseline", benchFile("base-3.txt"), "--new", benchFile("new-3.txt"),
		"--thresholds", filepath.Join(gateData, "thresholds.yaml"), "--json", file)
	if code != 3 || !strings.Contains(out, "INCONCLUSIVE: 36 inconclusive (exit 3)") {
		t.Fatalf("exit %d, want 3 with the text report\n%s", code, tail(out))
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Result string           `json:"result"`
		Rows   []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("%s is not JSON: %v", file, err)
	}
	if rep.Result != "INCONCLUSIVE" || len(rep.Rows) != 78 { // 62 rows with a direction and 16 without
		t.Errorf("%s: result %q with %d rows, want INCONCLUSIVE with 78", file, rep.Result, len(rep.Rows))
	}
	code, _, errOut := runGateCLI(t, "--baseline", benchFile("base.txt"), "--new", benchFile("noise.txt"), "--json", filepath.Join(t.TempDir(), "no", "such", "gate.json"))
	if code != 2 || !strings.Contains(errOut, "--json ") || !strings.Contains(errOut, "does not exist") {
		t.Errorf("an unwritable --json file: exit %d, want 2 (an I/O error, not a regression) with a message\n%s", code, errOut)
	}
}
