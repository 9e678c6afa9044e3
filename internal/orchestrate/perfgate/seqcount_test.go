package perfgate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// fakeGo is a go command whose `go test -bench PATTERN -count N` prints N
// runs of two points, prompt=a (±1%, uniform) and prompt=b (±NOISE_B%),
// both slowed by SLOW percent, selected by the pattern as go test would
// (a pattern naming one prompt runs that one), drawn from $SEED. Each
// call's arguments go to $CALLS.
const fakeGo = `#!/bin/bash
echo "$@" >> "$CALLS"
pattern="$5"; count="$9"
RANDOM=$((SEED + count)) # the same runs every time the test runs
echo "goos: linux"; echo "goarch: amd64"; echo "pkg: github.com/vllmperf/vllmperf"
echo "Unit ttft-p50-ns better=lower"
for ((i = 0; i < count; i++)); do
  for p in a b; do
    if [ "$pattern" != "Perf" ] && [[ "$pattern" != *"prompt=$p"* ]]; then continue; fi
    noise=1; [ "$p" = b ] && noise=$NOISE_B
    v=$(( 100000000 * (100 + SLOW) / 100 + (RANDOM - 16384) * noise * 1000000 / 16384 ))
    echo "BenchmarkPerf/profile=basic/scenario=ttft-tpot/prompt=$p/conc=1-2 1 $v ns/op $v ttft-p50-ns"
  done
done
`

// fakeGoCommand writes fakeGo into a new folder and sets its SEED, SLOW
// and NOISE_B; it returns the folder and the command's path (CALLS is
// the caller's).
func fakeGoCommand(t *testing.T, seed, slow, noiseB string) (dir, goCmd string) {
	t.Helper()
	dir = t.TempDir()
	goCmd = filepath.Join(dir, "go")
	if err := os.WriteFile(goCmd, []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SEED", seed)
	t.Setenv("SLOW", slow)
	t.Setenv("NOISE_B", noiseB)
	return dir, goCmd
}

// TestSequentialCount drives the sequential count through a fake go
// command: a clear slowdown is decided at the first look (min_samples
// runs, one go test), and a noisy point alone runs on when nothing
// changed, its runs appended to bench.txt and the gate's α that of the
// last look.
func TestSequentialCount(t *testing.T) {
	dir, goCmd := fakeGoCommand(t, "1", "0", "12")
	baseDir := filepath.Join(dir, "base")
	t.Setenv("CALLS", filepath.Join(dir, "base-calls"))
	o := Options{Go: goCmd, Dir: dir, Timeout: time.Minute, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}}
	base, _, err := o.benchWith(context.Background(), 10, "Perf", baseDir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, slow, noiseB string
		wantCalls          int
		wantPattern        string // of the second call
		wantRuns           map[string]int
		wantLast           string // the last look's decision
	}{
		{name: "clear slowdown", slow: "20", noiseB: "12", wantCalls: 1, wantRuns: map[string]int{"a": 6, "b": 6}, wantLast: "DIFFERENT"},
		{name: "one noisy point", slow: "0", noiseB: "12", wantCalls: 2, wantPattern: "^BenchmarkPerf$/^(profile=basic)$/^(scenario=ttft-tpot)$/^(prompt=b)$/^(conc=1)$",
			wantRuns: map[string]int{"a": 6, "b": 9}, wantLast: "SAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := filepath.Join(t.TempDir(), "calls")
			t.Setenv("CALLS", calls)
			t.Setenv("SLOW", tc.slow)
			t.Setenv("NOISE_B", tc.noiseB)
			t.Setenv("SEED", "2")
			var out bytes.Buffer
			o := Options{Go: goCmd, Dir: dir, Timeout: time.Minute, Stdout: &out, Stderr: &bytes.Buffer{}, Results: t.TempDir(), Sequential: "pocock"}
			set := thresholds.Empty()
			path, code, err := o.sequentialBench(quickConfig(), base, &set)(context.Background(), 12)
			if err != nil || code != 0 {
				t.Fatalf("code %d, %v\n%s", code, err, out.String())
			}
			data, _ := os.ReadFile(calls)
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) < tc.wantCalls || (tc.wantCalls == 1 && len(lines) != 1) {
				t.Errorf("%d go test calls, want %d:\n%s\n%s", len(lines), tc.wantCalls, data, out.String())
			}
			if tc.wantPattern != "" && len(lines) > 1 && !strings.Contains(lines[1], "-bench "+tc.wantPattern+" ") {
				t.Errorf("second call %q: want -bench %s", lines[1], tc.wantPattern)
			}
			in, err := input.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			runs := map[string]int{}
			for _, r := range in.Results {
				runs[strings.TrimSuffix(strings.TrimPrefix(string(r.Name), "Perf/profile=basic/scenario=ttft-tpot/prompt="), "/conc=1-2")]++
			}
			if runs["a"] != tc.wantRuns["a"] || runs["b"] < tc.wantRuns["b"] {
				t.Errorf("runs %v, want %v (b at least)\n%s", runs, tc.wantRuns, out.String())
			}
			if a := set.Gate("", "", "").Alpha; a >= 0.05 || a <= 0 {
				t.Errorf("the gate's α after the count: %g, want the last look's share of 0.05", a)
			}
			looks := regexp.MustCompile(`look at \d+ runs a point \(α × [0-9.]+\): (\w+),`).FindAllStringSubmatch(out.String(), -1)
			if len(looks) == 0 || looks[len(looks)-1][1] != tc.wantLast {
				t.Errorf("looks %v, want the last %s:\n%s", looks, tc.wantLast, out.String())
			}
			if !strings.Contains(out.String(), "perf-gate: sequential count (Pocock spending, cap 12)") {
				t.Errorf("no summary line:\n%s", out.String())
			}
		})
	}
}

func TestSequentialFromEnv(t *testing.T) {
	t.Setenv(EnvSequential, "pocock")
	if v, err := sequentialFromEnv(); v != "pocock" || err != nil {
		t.Errorf("pocock: %q, %v", v, err)
	}
	t.Setenv(EnvSequential, "fast")
	if _, err := sequentialFromEnv(); err == nil || !strings.Contains(err.Error(), "want pocock or obrien-fleming") {
		t.Errorf("fast: %v, want an error naming the choices", err)
	}
}
