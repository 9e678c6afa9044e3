package perf_test

// The perf gate end to end, as the workflow runs it: `make perf-gate`
// (package perfgate) and `go test -bench Perf`, each in a process of its
// own, bounded to one profile and scenario at quick size.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/render"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// gateEnv is the environment of a bounded gate run: one profile, one
// scenario, quick size, its own baseline store and results folder.
func gateEnv(store, res string, extra ...string) []string {
	env := append(os.Environ(),
		"VLLMPERF_PROFILES=basic", "VLLMPERF_SCENARIOS=ttft-tpot", "VLLMPERF_SIZE=quick",
		"VLLMPERF_BASELINE_STORE="+store, "VLLMPERF_GATE_RESULTS="+res, "VLLMPERF_RUNNER=test-runner",
		"VLLMPERF_SIM_ARGS=", "VLLMPERF_BASELINE=", "VLLMPERF_BUDGET=", "VLLMPERF_GATE_BASE=",
		"RESULTS=", "COUNT=", "PERF_GATE_BASE=", // the old names (package envvar) would warn
		"GITHUB_STEP_SUMMARY=", "GITHUB_ACTIONS=", "VLLMPERF_RESULTS=", "VLLMPERF_TELEMETRY=")
	return append(env, extra...)
}

// runCmd runs name with env in the module root and returns its exit
// status and output.
func runCmd(t *testing.T, env []string, name string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return 0, string(out)
}

// readGate reads a results folder's gate.json.
func readGate(t *testing.T, dir string) render.JSONReport {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "gate.json"))
	if err != nil {
		t.Fatalf("gate.json: %v", err)
	}
	var j render.JSONReport
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	return j
}

// TestFailedCheckFailsTheGate: a simulator fault that breaks the token
// reconciliation makes `go test -bench Perf` exit 1 naming the check,
// and the gate (against a clean baseline) still writes the results
// folder and gate.json, listing the check by name.
func TestFailedCheckFailsTheGate(t *testing.T) {
	testphase.Alone(t)
	t.Parallel() // functional: exit statuses and names, no real-time figure
	if testing.Short() {
		t.Skip("runs the suite in processes of its own")
	}
	store, dir := t.TempDir(), t.TempDir()
	bin := filepath.Join(dir, "vllmperf")
	if code, out := runCmd(t, os.Environ(), "go", "build", "-o", bin, "./cmd/vllmperf"); code != 0 {
		t.Fatal(out)
	}
	clean, summary := filepath.Join(dir, "clean"), filepath.Join(dir, "step-summary.md")
	code, out := runCmd(t, gateEnv(store, clean, "VLLMPERF_COUNT=1", "VLLMPERF_BACKEND=sim", "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+summary), bin, "perf-gate")
	if code != 0 || !strings.Contains(out, "recorded as the baseline") || !strings.Contains(out, "::notice title=perf gate::") {
		t.Fatalf("the first run: exit %d, want 0 recording the baseline with a notice:\n%s", code, out)
	}
	if md, err := os.ReadFile(summary); err != nil || !strings.Contains(string(md), "recorded as the baseline") {
		t.Errorf("the step summary does not say the baseline was recorded: %q, %v", md, err)
	}
	faulty := filepath.Join(dir, "faulty")
	code, out = runCmd(t, gateEnv(store, faulty, "VLLMPERF_COUNT=1", "VLLMPERF_BACKEND=sim", "VLLMPERF_SIM_ARGS=--sim-fault-usage-skew 1"), bin, "perf-gate")
	const name = "reconcile/generation_tokens"
	if code != 1 || !strings.Contains(out, "--- FAIL: BenchmarkPerf/profile=basic/scenario=ttft-tpot") || !strings.Contains(out, "check: FAIL "+name) {
		t.Fatalf("with --sim-fault-usage-skew 1: exit %d, want 1 naming %s:\n%s", code, name, out)
	}
	for _, f := range []string{results.BenchFile, results.SummaryFile, "gate.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(faulty, f)); err != nil {
			t.Errorf("the failed run's results folder lacks %s: %v", f, err)
		}
	}
	if j := readGate(t, faulty); j.ExitCode != 1 || !strings.Contains(j.Summary, name) {
		t.Errorf("gate.json: exit_code %d, summary %q; want 1 naming %s", j.ExitCode, j.Summary, name)
	}
}

// fakeNvidiaSMI puts package telemetry's fake nvidia-smi on PATH with
// the recorded GPU CSV gpu and no compute process.
func fakeNvidiaSMI(t *testing.T, gpu string) []string {
	t.Helper()
	dir := t.TempDir()
	td, err := filepath.Abs(filepath.Join("internal", "target", "telemetry", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(td, "fake-nvidia-smi"), filepath.Join(dir, "nvidia-smi")); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH"), "VLLMPERF_TELEMETRY=on",
		"FAKE_NVSMI_GPU=" + filepath.Join(td, gpu), "FAKE_NVSMI_APPS=" + filepath.Join(td, "apps-none.csv")}
}

// TestBenchTelemetry: with power telemetry (a fake nvidia-smi) the bench
// output reports joules per token; a throttled GPU makes every run
// INVALID, which fails the benchmarks with the evidence.
func TestBenchTelemetry(t *testing.T) {
	testphase.Alone(t)
	t.Parallel() // functional: exit statuses and names, no real-time figure
	if testing.Short() {
		t.Skip("runs the suite in processes of its own")
	}
	bench := []string{"test", "-run", "^$", "-bench", "Perf", "-benchtime", "1x", "."}
	env := append(gateEnv(t.TempDir(), t.TempDir(), "VLLMPERF_BACKEND=sim"), fakeNvidiaSMI(t, "gpu-normal.csv")...)
	code, out := runCmd(t, env, "go", bench...)
	if code != 0 || !strings.Contains(out, " j/tok") || !strings.Contains(out, " power-avg-w") {
		t.Fatalf("with power telemetry: exit %d, want 0 and j/tok in the bench output:\n%s", code, out)
	}
	env = append(gateEnv(t.TempDir(), t.TempDir(), "VLLMPERF_BACKEND=sim"), fakeNvidiaSMI(t, "gpu-power-limit-lowered.csv")...)
	code, out = runCmd(t, env, "go", bench...)
	if code != 1 || !strings.Contains(out, "check: INVALID gpu/throttle") || !strings.Contains(out, "SW power cap") {
		t.Fatalf("on a power-throttled GPU: exit %d, want 1 with gpu/throttle INVALID:\n%s", code, out)
	}
}

// perfGateRunner returns a function that runs `make perf-gate` as the
// perf-gate workflow does, bounded: the simulator image on the container
// backend, no GPUs, one profile and one scenario of one point
// (prefix-reuse: 2.5 s a run at quick size, against ttft-tpot's three
// points and 4.2 s), 6 runs a point (min_samples,
// and enough for the exact U test to pass Holm's correction over this one
// profile's headline rows; the workflow's 8 would only take longer), into
// a baseline store of its own. It returns make's exit status, its output
// and the results folder; make exits 2 for any failed recipe, so the
// gate's own status is read from gate.json (vllmperf perf-gate exits with
// it).
func perfGateRunner(t *testing.T) func(res string, extra ...string) (int, string, string) {
	t.Helper()
	if err := server.DockerAvailable(t.Context()); err != nil {
		skipWithoutDocker(t, fmt.Errorf("%w: %v", server.ErrNoDocker, err))
	}
	store, dir := t.TempDir(), t.TempDir()
	return func(res string, extra ...string) (int, string, string) {
		t.Helper()
		res = filepath.Join(dir, res)
		env := gateEnv(store, res, append([]string{"VLLMPERF_COUNT=6", "VLLMPERF_SCENARIOS=prefix-reuse", "VLLMPERF_IMAGE=sim", "VLLMPERF_GPUS=none", "VLLMPERF_BACKEND="}, extra...)...)
		start := time.Now()
		code, out := runCmd(t, env, "make", "--no-print-directory", "perf-gate")
		t.Logf("make perf-gate %v: exit %d in %v", extra, code, time.Since(start).Round(time.Second))
		return code, out, res
	}
}

// recordFirst runs perfGate in its empty store: it records the baseline
// (exit 0 and a notice).
func recordFirst(t *testing.T, perfGate func(string, ...string) (int, string, string)) {
	t.Helper()
	code, out, _ := perfGate("first")
	if code != 0 || !strings.Contains(out, "recorded as the baseline") {
		t.Fatalf("first run: exit %d, want 0 with the notice:\n%s", code, out)
	}
}

// TestCIGateFirstRun is the done-when: in a store with no
// baseline `make perf-gate` records one (exit 0 and a notice); again: a
// verdict (TestCIGateSlowerFails has the third run, on a slowed
// simulator). The second run is an A/A comparison in real time of two
// runs minutes apart: it runs in make test's timed phase, with nothing
// else on the machine (beside the alone phase's lanes, a busier machine
// during the second run moved ITL P99 by 8–33% and failed it: the runner
// control times CPU work, not the late wake-ups that move a real-time
// server's tails).
func TestCIGateFirstRun(t *testing.T) {
	testphase.Timed(t)
	if testing.Short() {
		t.Skip("runs make perf-gate twice")
	}
	perfGate := perfGateRunner(t)
	recordFirst(t, perfGate)
	code, out, res := perfGate("second")
	// The shared machine may run slower than when the first run recorded
	// the baseline: then the gate names the slower runner (INVALID, exit
	// 2, its figure in the summary), never a bare REGRESSION.
	j := readGate(t, res)
	runnerNamed := j.ExitCode == 2 && strings.Contains(j.Summary, "slower runner: ") && j.Result == gate.OutcomeInvalid
	if strings.Contains(out, "recorded as the baseline") || (j.ExitCode != 0 && j.ExitCode != 3 && !runnerNamed) || (code == 0) != (j.ExitCode == 0) {
		t.Fatalf("second run: make exit %d, gate %s (exit %d): %s; want a verdict against the recorded baseline, PASS or INCONCLUSIVE, or INVALID naming a slower runner:\n%s", code, j.Result, j.ExitCode, j.Summary, out)
	}
	if runnerNamed {
		t.Logf("second run: %s", j.Summary)
	}
}

// TestCIGateSlowerFails: after `make perf-gate` recorded the baseline,
// the same on a simulator slowed by 30% fails (exit 1) with REGRESSION
// rows. A 30% slowdown stands clear of a busy machine (the runner
// control would have to see the runner 20% slower to call it INVALID),
// so it runs in the alone phase's containers lane.
func TestCIGateSlowerFails(t *testing.T) {
	testphase.Alone(t)
	testphase.Lane(t, testphase.LaneContainers)
	if testing.Short() {
		t.Skip("runs make perf-gate twice")
	}
	perfGate := perfGateRunner(t)
	recordFirst(t, perfGate)
	code, out, res := perfGate("slowed", "VLLMPERF_SIM_ARGS=--sim-slowdown 1.3")
	j := readGate(t, res)
	regressions := 0
	for _, row := range j.Rows {
		if row.Verdict == gate.Regression {
			regressions++
		}
	}
	if code == 0 || j.ExitCode != 1 || regressions == 0 || !strings.Contains(out, "REGRESSION") || !strings.Contains(out, "perf gate: FAIL (exit 1)") {
		t.Fatalf("slowed by 30%%: make exit %d, gate exit %d, %d REGRESSION rows; want a failure (exit 1) with REGRESSION rows:\n%s", code, j.ExitCode, regressions, out)
	}
}

// TestUpgradeGateMake: `make upgrade-gate`, as upgrade-gate.yml runs it,
// takes its inputs from the environment: one point, the simulator slowed
// by half on NEW, gated DIFFERENT (gate.json's exit 1; make exits 2 for
// any failed recipe).
func TestUpgradeGateMake(t *testing.T) {
	testphase.Alone(t)
	t.Parallel() // a 50% slowdown, measured in interleaved pairs: clear of a busy machine
	if testing.Short() {
		t.Skip("runs make upgrade-gate")
	}
	res := filepath.Join(t.TempDir(), "upgrade")
	env := append(os.Environ(), "OLD=in-process", "NEW=in-process", "OLD_SIM_ARGS=", "NEW_SIM_ARGS=--sim-slowdown 1.5",
		"POINTS=profile=basic/scenario=ttft-tpot/prompt=short/conc=1", "MAX_PAIRS=8", "SERVERS=", "UPGRADE_RESULTS="+res)
	code, out := runCmd(t, env, "make", "--no-print-directory", "upgrade-gate", "UPGRADE_ARGS=--size quick")
	if j := readGate(t, res); code == 0 || j.ExitCode != 1 || !strings.Contains(out, "DIFFERENT") {
		t.Fatalf("NEW slowed by half: make exit %d, gate exit %d; want DIFFERENT (exit 1):\n%s", code, j.ExitCode, out)
	}
}
