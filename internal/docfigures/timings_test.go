package docfigures

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The wall-clock times README.md and docs/ quote: make timings runs every
// command of timedCommands once, in order, through TestFiguresTimings with
// envTimings=1, and writes timingsRecord; without it the test reads the
// committed record and checks the figures against it. No test times
// anything else: the record is what make timings measured, and the test
// checks only that the pages say what the record says.
const (
	envTimings    = "VLLMPERF_TIMINGS"
	timingsRecord = "docs/figures/timings.txt"
)

// timedCommand is a command whose time a page quotes, written as the
// record and the pages write it: leading NAME=value words are its
// environment, single quotes only group (no other shell syntax).
type timedCommand struct {
	cmd   string
	setup string // run first, untimed: the build the command needs
}

// timedCommands are the commands make timings times, in its order. Each
// setup compiles what its command builds, so that a time is that of the
// command on a warm build cache, as a user runs it a second time.
// make baseline (10 runs of the suite) is not one of them: its figure is
// 10 × the suite's line.
var timedCommands = []timedCommand{
	{cmd: "make bench", setup: "go test -count=1 -run '^$' ."},
	{cmd: cmdSuite},
	{cmd: cmdCapacity, setup: "go build -o bin/vllmperf ./cmd/vllmperf"},
	{cmd: cmdHistoryRun},
	{cmd: cmdHistoryQuality, setup: "go test -count=1 -run '^$' ./internal/results/history/"},
	{cmd: cmdEngine, setup: "go test -count=1 -run '^$' ./internal/vllmsim/engine/"},
	{cmd: cmdEngineRace, setup: "go test -count=1 -race -run '^$' ./internal/vllmsim/engine/"},
}

const (
	cmdSuite          = "VLLMPERF_SIZE=quick go test -run '^$' -bench Perf -benchtime 1x ."
	cmdCapacity       = "bin/vllmperf capacity --size quick --start 4"
	cmdHistoryRun     = "VLLMPERF_PROFILES=basic VLLMPERF_SCENARIOS=ttft-tpot go test -short -run '^$' -bench Perf -benchtime 1x -count 10 ."
	cmdHistoryQuality = "go test -count=1 -run TestHistoryQuality -v ./internal/results/history/"
	cmdEngine         = "go test -count=1 ./internal/vllmsim/engine/"
	cmdEngineRace     = "go test -count=1 -race ./internal/vllmsim/engine/"
)

// timing is one line of the record.
type timing struct {
	cmd     string
	seconds float64
	start   time.Time
	nproc   int
	result  string // "ok", or "fail: " and why
}

func (t timing) ok() bool { return t.result == "ok" }

// timings are the record's lines by command.
type timings map[string]timing

const timingsHeader = "# Wall-clock times of the commands README.md and docs/ quote, each run once by make timings on this\n" +
	"# machine, in this order (TestFiguresTimings writes the pages' figures from them). Tab-separated:\n" +
	"# command, wall seconds, start (UTC), nproc, result (ok, or fail: why).\n"

// TestFiguresTimings checks the timing figures of README.md and docs/
// against docs/figures/timings.txt; with VLLMPERF_TIMINGS=1 (make
// timings) it first runs the timed commands and rewrites the record.
func TestFiguresTimings(t *testing.T) {
	t.Parallel()
	root := ModuleRoot(t)
	record := filepath.Join(root, timingsRecord)
	if os.Getenv(envTimings) == "1" {
		var b strings.Builder
		b.WriteString(timingsHeader)
		for _, c := range timedCommands {
			tm := runTimed(t, root, c)
			t.Logf("%s: %.1f s, %s", tm.cmd, tm.seconds, tm.result)
			b.WriteString(tm.line())
		}
		if err := os.WriteFile(record, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("%v: run make timings (on an otherwise idle machine) to record the commands' times", err)
	}
	r, err := parseTimings(string(data))
	if err != nil {
		t.Fatalf("%s: %v: run make timings to record it again", timingsRecord, err)
	}
	for _, c := range timedCommands {
		if tm := r[c.cmd]; !tm.ok() {
			t.Errorf("%s: %q failed when make timings ran it (%s): the pages quote no time of a failed run; fix it and run make timings", timingsRecord, c.cmd, tm.result)
		}
	}
	for _, f := range timingFigures {
		Sync(t, f.file, f.name, f.body(r))
	}
}

// timingFigures are the pages' timing figures and how each is written
// from the record.
var timingFigures = []struct {
	file, name string
	body       func(timings) string
}{
	{"README.md", "timing-make-bench-approx", func(r timings) string {
		return fmt.Sprintf("≈ %s on this %d-core machine", minutesTenths(r["make bench"].seconds), r["make bench"].nproc)
	}},
	{"docs/suite.md", "timing-make-bench", func(r timings) string {
		b := r["make bench"]
		target := "target ≤ 3 min"
		if b.seconds > 180 {
			target = "over its target of 3 min"
		}
		return fmt.Sprintf("`make bench` took %s on this %d-core machine (%s)", minSec(b.seconds), b.nproc, target)
	}},
	{"README.md", "timing-capacity-quick", func(r timings) string {
		return fmt.Sprintf("%s on this %d-core machine", minSec(r[cmdCapacity].seconds), r[cmdCapacity].nproc)
	}},
	{"README.md", "timing-make-baseline", func(r timings) string {
		s := r[cmdSuite]
		return fmt.Sprintf("≈ %s here: 10 × the suite's %s", wholeMinutes(10*s.seconds), minSec(s.seconds))
	}},
	{"docs/capacity.md", "timing-capacity-quick", func(r timings) string {
		return fmt.Sprintf("%s on this %d-core machine", minSec(r[cmdCapacity].seconds), r[cmdCapacity].nproc)
	}},
	{"docs/gate.md", "timing-make-baseline", func(r timings) string {
		s := r[cmdSuite]
		return fmt.Sprintf("≈ %s on a %d-core machine: 10 × the suite's %s", wholeMinutes(10*s.seconds), s.nproc, minSec(s.seconds))
	}},
	{"docs/history.md", "timing-history-run", func(r timings) string {
		h := r[cmdHistoryRun]
		return fmt.Sprintf("about %s a run on this %d-core machine", minSec(h.seconds), h.nproc)
	}},
	{"docs/history.md", "timing-history-quality", func(r timings) string {
		return "≈ " + minSec(r[cmdHistoryQuality].seconds) + " here"
	}},
	{"docs/simulator.md", "timing-engine-tests", func(r timings) string {
		return fmt.Sprintf("≈ %s; `-race` ≈ %s on a %d-core machine", minSec(r[cmdEngine].seconds), minSec(r[cmdEngineRace].seconds), r[cmdEngine].nproc)
	}},
}

// minSec writes seconds as "48 s" or "2 min 25 s", to the second.
func minSec(s float64) string {
	n := int(math.Round(s))
	if n < 60 {
		return fmt.Sprintf("%d s", n)
	}
	if n%60 == 0 {
		return fmt.Sprintf("%d min", n/60)
	}
	return fmt.Sprintf("%d min %d s", n/60, n%60)
}

// minutesTenths writes seconds as minutes to a tenth: "2.4 min".
func minutesTenths(s float64) string { return fmt.Sprintf("%.1f min", s/60) }

// wholeMinutes writes seconds as whole minutes: "24 min".
func wholeMinutes(s float64) string { return fmt.Sprintf("%.0f min", s/60) }

// line is the record's line of t.
func (t timing) line() string {
	return fmt.Sprintf("%s\t%.2f\t%s\t%d\t%s\n", t.cmd, t.seconds, t.start.UTC().Format(time.RFC3339), t.nproc, t.result)
}

// parseTimings reads a record: a line per timed command (# lines are
// comments), every timed command once.
func parseTimings(data string) (timings, error) {
	known := map[string]bool{}
	var names []string
	for _, c := range timedCommands {
		known[c.cmd] = true
		names = append(names, strconv.Quote(c.cmd))
	}
	r := timings{}
	for i, line := range strings.Split(data, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			return nil, fmt.Errorf("line %d: want 5 tab-separated fields (command, seconds, start, nproc, result), got %d in %q", i+1, len(f), line)
		}
		tm := timing{cmd: f[0], result: f[4]}
		if !known[tm.cmd] {
			return nil, fmt.Errorf("line %d: unknown command %q: the timed commands are %s (timedCommands in internal/docfigures)", i+1, tm.cmd, strings.Join(names, ", "))
		}
		if _, dup := r[tm.cmd]; dup {
			return nil, fmt.Errorf("line %d: %q a second time: want one line per command", i+1, tm.cmd)
		}
		var err error
		if tm.seconds, err = strconv.ParseFloat(f[1], 64); err != nil || tm.seconds < 0 || math.IsInf(tm.seconds, 0) || math.IsNaN(tm.seconds) {
			return nil, fmt.Errorf("line %d: seconds %q: want a number of seconds (0 or more), such as 145.2", i+1, f[1])
		}
		if tm.start, err = time.Parse(time.RFC3339, f[2]); err != nil {
			return nil, fmt.Errorf("line %d: start %q: want a UTC time such as 2026-12-03T21:15:00Z", i+1, f[2])
		}
		if tm.nproc, err = strconv.Atoi(f[3]); err != nil || tm.nproc < 1 {
			return nil, fmt.Errorf("line %d: nproc %q: want the machine's number of cores, a positive whole number", i+1, f[3])
		}
		if tm.result != "ok" && !strings.HasPrefix(tm.result, "fail: ") {
			return nil, fmt.Errorf("line %d: result %q: want ok, or fail: and why", i+1, tm.result)
		}
		r[tm.cmd] = tm
	}
	for _, c := range timedCommands {
		if _, ok := r[c.cmd]; !ok {
			return nil, fmt.Errorf("no line for %q", c.cmd)
		}
	}
	return r, nil
}

// splitCommand returns a timed command's environment settings and
// arguments.
func splitCommand(cmd string) (env, args []string) {
	for _, w := range strings.Fields(cmd) {
		if len(args) == 0 && strings.Contains(w, "=") && !strings.HasPrefix(w, "-") {
			env = append(env, w)
			continue
		}
		args = append(args, strings.Trim(w, "'"))
	}
	return env, args
}

// runTimed runs c in dir, its setup first, and times c alone (a failed
// setup is recorded as c failing after 0 s). Its
// environment is this one without the VLLMPERF_ settings (a page's time
// is the default setup's) and make's, plus the command's own.
func runTimed(t *testing.T, dir string, c timedCommand) timing {
	t.Helper()
	if c.setup != "" {
		if res := run(dir, c.setup); res != "ok" {
			return timing{cmd: c.cmd, start: time.Now(), nproc: runtime.NumCPU(), result: "fail: setup " + c.setup + ": " + strings.TrimPrefix(res, "fail: ")}
		}
	}
	start := time.Now()
	res := run(dir, c.cmd)
	return timing{cmd: c.cmd, seconds: time.Since(start).Seconds(), start: start, nproc: runtime.NumCPU(), result: res}
}

// run runs cmd in dir with its output on this process's and returns ok
// or fail: and why.
func run(dir, cmd string) string {
	env, args := splitCommand(cmd)
	x := exec.Command(args[0], args[1:]...)
	x.Dir = dir
	x.Stdout, x.Stderr = os.Stdout, os.Stderr
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "VLLMPERF_") || name == "MAKEFLAGS" || name == "MFLAGS" || name == "MAKELEVEL" {
			continue
		}
		x.Env = append(x.Env, kv)
	}
	x.Env = append(x.Env, env...)
	if err := x.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "fail: " + exit.String()
		}
		return "fail: " + err.Error()
	}
	return "ok"
}

func TestParseTimings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, err string
	}{
		{"good.txt", ""},
		{"missing-field.txt", "line 3: want 5 tab-separated fields"},
		{"bad-number.txt", `line 3: seconds "2:25": want a number of seconds (0 or more)`},
		{"negative-seconds.txt", `line 3: seconds "-4.0": want a number of seconds (0 or more)`},
		{"unknown-command.txt", `line 4: unknown command "make bench-all"`},
		{"bad-start.txt", `line 3: start "yesterday": want a UTC time`},
		{"bad-nproc.txt", `line 3: nproc "two": want the machine's number of cores`},
		{"bad-result.txt", `line 3: result "passed": want ok, or fail: and why`},
		{"duplicate.txt", `line 4: "make bench" a second time`},
		{"missing-command.txt", `no line for "go test -count=1 -race ./internal/vllmsim/engine/"`},
		{"empty.txt", `no line for "make bench"`},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "timings", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		r, err := parseTimings(string(data))
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.file, err)
			} else if got := r["make bench"]; got.seconds != 145.2 || got.nproc != 2 || !got.ok() {
				t.Errorf("%s: make bench read as %+v", tc.file, got)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one containing %q", tc.file, err, tc.err)
		}
	}
}

func TestTimingFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s                     float64
		minSec, tenths, whole string
	}{
		{2.6, "3 s", "0.0 min", "0 min"},
		{48.4, "48 s", "0.8 min", "1 min"},
		{59.6, "1 min", "1.0 min", "1 min"},
		{145.2, "2 min 25 s", "2.4 min", "2 min"},
		{1418, "23 min 38 s", "23.6 min", "24 min"},
	} {
		if got := minSec(tc.s); got != tc.minSec {
			t.Errorf("minSec(%v) = %q, want %q", tc.s, got, tc.minSec)
		}
		if got := minutesTenths(tc.s); got != tc.tenths {
			t.Errorf("minutesTenths(%v) = %q, want %q", tc.s, got, tc.tenths)
		}
		if got := wholeMinutes(tc.s); got != tc.whole {
			t.Errorf("wholeMinutes(%v) = %q, want %q", tc.s, got, tc.whole)
		}
	}
}

func TestSplitCommand(t *testing.T) {
	t.Parallel()
	env, args := splitCommand(cmdHistoryRun)
	if want := []string{"VLLMPERF_PROFILES=basic", "VLLMPERF_SCENARIOS=ttft-tpot"}; fmt.Sprint(env) != fmt.Sprint(want) {
		t.Errorf("env %q, want %q", env, want)
	}
	if want := []string{"go", "test", "-short", "-run", "^$", "-bench", "Perf", "-benchtime", "1x", "-count", "10", "."}; fmt.Sprint(args) != fmt.Sprint(want) {
		t.Errorf("args %q, want %q", args, want)
	}
	if env, args := splitCommand(cmdEngine); env != nil || args[0] != "go" || args[2] != "-count=1" {
		t.Errorf("%s: env %q, args %q", cmdEngine, env, args)
	}
}

// TestRunTimed: a command that succeeds is recorded ok, one that fails
// (or whose setup fails) is recorded with why, and the line reads back.
func TestRunTimed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		c    timedCommand
		want string
	}{
		{timedCommand{cmd: "true"}, "ok"},
		{timedCommand{cmd: "false"}, "fail: exit status 1"},
		{timedCommand{cmd: "true", setup: "false"}, "fail: setup false: exit status 1"},
		{timedCommand{cmd: "no-such-command-vllmperf"}, "fail: exec: \"no-such-command-vllmperf\": executable file not found"},
	} {
		tm := runTimed(t, dir, tc.c)
		if !strings.HasPrefix(tm.result, tc.want) || tm.seconds < 0 || tm.nproc < 1 {
			t.Errorf("%s (setup %q): %+v, want result %q", tc.c.cmd, tc.c.setup, tm, tc.want)
		}
		if f := strings.Split(strings.TrimSuffix(tm.line(), "\n"), "\t"); len(f) != 5 || f[4] != tm.result {
			t.Errorf("%s: line %q", tc.c.cmd, tm.line())
		}
	}
}
