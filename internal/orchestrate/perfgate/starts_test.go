package perfgate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// TestBenchOverStarts: with Starts the suite runs as that many go test
// processes of count/Starts runs, the later ones appending to bench.txt
// and keeping their folders under start-N/; a count that is no multiple
// is refused before anything runs.
func TestBenchOverStarts(t *testing.T) {
	dir, goCmd := fakeGoCommand(t, "3", "0", "1")
	calls := filepath.Join(dir, "calls")
	t.Setenv("CALLS", calls)
	results := filepath.Join(dir, "results")
	o := Options{Go: goCmd, Dir: dir, Timeout: time.Minute, Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Results: results, Starts: 5}
	path, code, err := o.bench(context.Background(), 10, []string{"basic"})
	if err != nil || code != 0 {
		t.Fatalf("bench: code %d, %v", code, err)
	}
	if out := o.Stdout.(*bytes.Buffer).String(); strings.Count(out, " >> "+path) != 4 {
		t.Errorf("the later processes' lines do not say they append to %s:\n%s", path, out)
	}
	data, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d go test processes, want 5:\n%s", len(lines), data)
	}
	for _, l := range lines {
		if !strings.Contains(l, "-count 2 ") {
			t.Errorf("a process ran %q, want -count 2", l)
		}
	}
	in, err := input.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Results) != 2*10 {
		t.Errorf("bench.txt holds %d results, want 20 (2 points × 10 runs)", len(in.Results))
	}
	for i := 2; i <= 5; i++ {
		if _, err := os.Stat(filepath.Join(results, fmt.Sprintf("start-%d-basic", i))); err != nil {
			t.Errorf("start %d's folder: %v", i, err)
		}
	}
	if _, _, err := o.bench(context.Background(), 12, nil); err == nil || !strings.Contains(err.Error(), envvar.Starts.Name) {
		t.Errorf("count 12 over 5 starts: %v, want an error naming %s", err, envvar.Starts.Name)
	}
}

// TestStartsRefusedWith: VLLMPERF_STARTS is refused with what runs the
// suite's processes otherwise, and below 1.
func TestStartsRefusedWith(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		sets string
		want string
	}{
		{"none", Options{Starts: 0}, "", "want at least 1"},
		{"sequential", Options{Starts: 2, Sequential: "pocock"}, "", envvar.Sequential.Name},
		{"GPU sets", Options{Starts: 2}, "0;1", envvar.GPUSets.Name},
		{"alone", Options{Starts: 2}, "", ""},
	} {
		t.Setenv(envvar.GPUSets.Name, tc.sets)
		err := tc.o.checkStarts()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
}

// TestPlanOverStarts: the plan rounds the count up to a multiple of the
// starts, says so, and its minimum detectable effects allow for the new
// side's starts: a lower start floor than one process's.
func TestPlanOverStarts(t *testing.T) {
	history := filepath.Join("testdata", "last-basic-ttft.txt")
	one, err := NewPlan(quickConfig(), Key{Runner: "r"}, 12, history)
	if err != nil {
		t.Fatal(err)
	}
	five, err := NewPlan(quickConfig(), Key{Runner: "r"}, 12, history)
	if err != nil {
		t.Fatal(err)
	}
	set := thresholds.Default()
	if err := one.spreadOverStarts(1, set); err != nil {
		t.Fatal(err)
	}
	if err := five.spreadOverStarts(5, set); err != nil {
		t.Fatal(err)
	}
	if five.Count != 15 || five.Processes != 5 || !strings.Contains(five.Note, "rounded up to 15") || !strings.Contains(five.Note, "5 go test processes of count 3") {
		t.Errorf("count %d, processes %d, note %q: want 15 over 5 processes, said", five.Count, five.Processes, five.Note)
	}
	if len(one.MinimumEffects) == 0 || len(five.MinimumEffects) != len(one.MinimumEffects) {
		t.Fatalf("minimum effects: %d and %d", len(one.MinimumEffects), len(five.MinimumEffects))
	}
	for i, m := range five.MinimumEffects {
		if m.NewStarts != 5 || m.StartFloor() >= one.MinimumEffects[i].StartFloor() {
			t.Errorf("%s %s: %d new starts, floor %.3g against one process's %.3g", m.Profile, m.Unit, m.NewStarts, m.StartFloor(), one.MinimumEffects[i].StartFloor())
		}
	}
}

// TestStartDir: a later process's folder names the profiles of a part
// (the matrix's parts then merge without two holding one path), and
// nothing for the whole suite.
func TestStartDir(t *testing.T) {
	for _, tc := range []struct {
		i        int
		profiles []string
		want     string
	}{
		{2, nil, "start-2"},
		{3, []string{"basic"}, "start-3-basic"},
		{2, []string{"basic", "low-latency"}, "start-2-basic+low-latency"},
		{2, profile.Names(), "start-2"},
	} {
		if got := startDir(tc.i, tc.profiles); got != tc.want {
			t.Errorf("startDir(%d, %q) = %q, want %q", tc.i, tc.profiles, got, tc.want)
		}
	}
}
