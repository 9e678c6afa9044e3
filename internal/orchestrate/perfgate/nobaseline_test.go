package perfgate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// gateRun is one `make perf-gate` through the fake go command: the event,
// the model (part of the key), SLOW percent, and whether main refreshes.
type gateRun struct {
	name, event, model, slow string
	refresh                  bool
	wantCode                 int
	wantOut                  []string
	wantRan                  bool // go test was called
	wantBaseline             string
}

// TestNoGreenWithoutBaseline runs perf-gate's sequence of runs on one
// store: main records a key's baseline; a pull request on another model,
// 30% slower, exits 3 naming the missing baseline and the fix, running
// and recording nothing; a pull request on the key is gated (FAIL); a
// push to main that fails keeps the baseline, whether it is a real or a
// provisional one.
func TestNoGreenWithoutBaseline(t *testing.T) {
	dir, fake := fakeGoCommand(t, "3", "0", "1")
	goCmd := withSummary(t, fake)
	for k, v := range map[string]string{"VLLMPERF_RUNNER": "r", "VLLMPERF_BACKEND": "sim", "VLLMPERF_PROFILES": "basic",
		"VLLMPERF_SCENARIOS": "ttft-tpot", "VLLMPERF_SIZE": "quick", "VLLMPERF_GPU_NAME": "", "VLLMPERF_GPU_SETS": "",
		envvar.GateStep.Name: "", envvar.GateStep.Old: "", "VLLMPERF_BUDGET": "", "GITHUB_SHA": ""} {
		t.Setenv(k, v)
	}
	store := Store{Dir: t.TempDir()}
	runs := []gateRun{
		{name: "main records", event: "push", model: "m1", slow: "0", wantCode: 0, wantRan: true,
			wantOut: []string{"recorded as the baseline"}, wantBaseline: "m1"},
		{name: "a pull request on another model, 30% slower", event: "pull_request", model: "m2", slow: "30", wantCode: 3,
			wantOut: []string{"no baseline for this key, and a pull request does not record one", "model=m2", "record the key's baseline on main first",
				"vllmperf upgrade-gate", "VLLMPERF_BASELINE", "differs: model=m2 here, m1 stored"}},
		{name: "a pull request on the key, 30% slower", event: "pull_request", model: "m1", slow: "30", wantCode: 1, wantRan: true,
			wantOut: []string{"FAIL"}, wantBaseline: "m1"},
		{name: "a failing push to main", event: "push", model: "m1", slow: "30", refresh: true, wantCode: 1, wantRan: true,
			wantOut: []string{"FAIL"}, wantBaseline: "m1"},
	}
	var first []byte
	for i, r := range runs {
		out := runGate(t, dir, goCmd, store, r)
		k := KeyFromEnv(t.Context())
		path, m, ok, err := store.Baseline(k)
		switch {
		case err != nil:
			t.Fatal(err)
		case ok != (r.wantBaseline != ""):
			t.Errorf("%s: the key %s has a baseline: %v, want %v", r.name, k, ok, r.wantBaseline != "")
		case ok && m.Provisional:
			t.Errorf("%s: the baseline is provisional: %+v", r.name, m)
		}
		data, _ := os.ReadFile(path)
		if i == 0 {
			first = data
		} else if ok && !bytes.Equal(data, first) {
			t.Errorf("%s: the baseline changed:\n%s", r.name, out)
		}
	}
	// A provisional baseline (as pull requests recorded before) is not
	// replaced by a FAIL either.
	t.Setenv("VLLMPERF_MODEL", "m1")
	k := KeyFromEnv(t.Context())
	_, m, _, _ := store.Baseline(k)
	m.Provisional = true
	if err := store.Record(k, store.Path(k, BaselineFile), m, true); err != nil {
		t.Fatal(err)
	}
	runGate(t, dir, goCmd, store, gateRun{name: "a failing push to main on a provisional baseline", event: "push", model: "m1", slow: "30",
		refresh: true, wantCode: 1, wantRan: true, wantOut: []string{"FAIL"}})
	if data, _ := os.ReadFile(store.Path(k, BaselineFile)); !bytes.Equal(data, first) {
		t.Error("a FAIL replaced the provisional baseline")
	}
}

// withSummary wraps the fake go command so that it also writes the
// results folder's summary.json, samples.jsonl and timeseries.jsonl (the
// reports perf-gate writes read them), with no run in them.
func withSummary(t *testing.T, fake string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "go")
	script := "#!/bin/bash\nr=\"$" + suite.EnvResults + "\"\necho '{\"config\": {}, \"runs\": []}' > \"$r/summary.json\"\n: > \"$r/samples.jsonl\"\n: > \"$r/timeseries.jsonl\"\nexec " + fake + " \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// runGate runs r through Run and checks its exit status, its output and
// whether go test ran; it returns the output.
func runGate(t *testing.T, dir, goCmd string, store Store, r gateRun) string {
	t.Helper()
	t.Setenv("VLLMPERF_MODEL", r.model)
	t.Setenv("SLOW", r.slow)
	calls := filepath.Join(t.TempDir(), "calls")
	t.Setenv("CALLS", calls)
	// Two buffers: go test's stdout and stderr are copied by two goroutines.
	var stdout, stderr bytes.Buffer
	o := Options{Go: goCmd, Dir: dir, Timeout: time.Minute, Stdout: &stdout, Stderr: &stderr, Results: t.TempDir(),
		Count: 10, Store: store, Event: r.event, Refresh: r.refresh}
	code, err := Run(context.Background(), o)
	out := stdout.String() + stderr.String()
	if err != nil || code != r.wantCode {
		t.Errorf("%s: exit %d (%v), want %d:\n%s", r.name, code, err, r.wantCode, out)
	}
	for _, w := range r.wantOut {
		if !strings.Contains(out, w) {
			t.Errorf("%s: the output lacks %q:\n%s", r.name, w, out)
		}
	}
	if _, err := os.Stat(calls); (err == nil) != r.wantRan {
		t.Errorf("%s: go test ran: %v, want %v", r.name, err == nil, r.wantRan)
	}
	return out
}
