package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

// runBisectCLI runs `vllmperf bisect args...`.
func runBisectCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), &out, &errOut, append([]string{"bisect"}, args...))
	code = exitCode(err, &errOut)
	return code, out.String(), errOut.String()
}

// TestBisectSimulator bisects 8 simulator builds, the first 4 unchanged
// and the last 4 with --sim-slowdown 1.25 (testdata/bisect-sim-8.txt):
// line 5 must be named the first bad build after at most 4 comparisons,
// with the time spent and the prediction printed and the report page
// written. One quick point, the embedded simulator, both servers kept up.
// The default preset's 20 ms steps keep a 25% slowdown clear of a busy
// machine's scheduling noise (on the l4 preset's 6 ms steps a 1.25 build
// was called SAME; on h200's 3 ms, intervals were ±190%). It measures in
// real time for about a minute (3 gates of 6 pairs), so it runs in make
// test's alone phase.
func TestBisectSimulator(t *testing.T) {
	testphase.Alone(t)
	dir := filepath.Join(t.TempDir(), "bisect")
	code, out, errOut := runBisectCLI(t, "--candidates", filepath.Join("testdata", "bisect-sim-8.txt"),
		"--points", "profile=basic/scenario=ttft-tpot/prompt=short", "--size", "quick", "--servers", "keep",
		"--max-pairs", "10", "--results", dir)
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	m := regexp.MustCompile(`first bad build: line 5 \(sim --sim-slowdown 1.25\), after (\d) comparisons? in `).FindStringSubmatch(out)
	if m == nil || m[1] > "4" {
		t.Errorf("stdout does not name line 5 after at most 4 comparisons:\n%s", out)
	}
	for _, want := range []string{"time spent: ", "at most 4 comparisons", "report: " + filepath.Join(dir, "bisect.html")} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "bisect: 8 builds: at most 4 comparisons") {
		t.Errorf("no prediction before the first step on stderr:\n%s", errOut)
	}
	page, err := os.ReadFile(filepath.Join(dir, "bisect.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "the first bad build (step") {
		t.Errorf("bisect.html does not mark the first bad build")
	}
}

// TestBisectUsage: bad input stops the command before any server starts
// (exit 2), naming the fix.
func TestBisectUsage(t *testing.T) {
	t.Parallel()
	one := filepath.Join(t.TempDir(), "one.txt")
	if err := os.WriteFile(one, []byte("sim\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no candidates", nil, "bisect needs --candidates FILE"},
		{"missing file", []string{"--candidates", "nope.txt"}, "nope.txt: no such file"},
		{"one build", []string{"--candidates", one}, "has 1 builds: give at least 2"},
		{"point", []string{"--candidates", filepath.Join("testdata", "bisect-sim-8.txt"), "--points", "profile=basic/scenario=nope"}, `point "profile=basic/scenario=nope" matches none`},
		{"servers", []string{"--candidates", filepath.Join("testdata", "bisect-sim-8.txt"), "--servers", "both"}, `servers "both": want restart`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, _, errOut := runBisectCLI(t, append(tc.args, "--results", t.TempDir())...)
			if code != 2 || !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.wantErr)
			}
		})
	}
}
