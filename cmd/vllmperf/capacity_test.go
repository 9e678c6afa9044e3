package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

// TestCapacityRejectsBadInput: each mistake is a usage error (exit 2)
// naming the flag, before any server starts.
func TestCapacityRejectsBadInput(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// a search over something else
		{"bad over", []string{"--over", "users"}, `--over "users": want rate`},
		// a size that does not exist
		{"bad size", []string{"--size", "huge"}, `--size size "huge"`},
		// a scenario that is no capacity search
		{"not a capacity scenario", []string{"--scenario", "poisson"}, "--scenario poisson is no capacity search"},
		// a budget too small to bracket
		{"one run", []string{"--max-runs", "1"}, "--max-runs 1: want at least 2 runs"},
		// a negative start
		{"negative start", []string{"--start", "-2"}, "--start -2: want a positive first level"},
		// simulator flags for a server that is already running
		{"sim args on a target", []string{"--target", "http://127.0.0.1:1", "--sim-args", "--sim-slowdown 2"}, "--profile and --sim-args: a running server is not started"},
		// a profile that does not exist
		{"bad profile", []string{"--profile", "turbo"}, "--profile"},
		// a fractional concurrency
		{"fractional concurrency", []string{"--over", "concurrency", "--start", "1.5"}, "start 1.5: want a positive request rate, or a whole number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut limitedBuffer
			err := run(context.Background(), &out, &errOut, append([]string{"capacity"}, tc.args...))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, 2, exitCode(err, &errOut), "exit status of %v", err)
			assert.Empty(t, out.String(), "nothing on stdout")
		})
	}
}

// statement is the first line `vllmperf capacity` prints: the capacity,
// the failing rate above it and the runs.
var statement = regexp.MustCompile(`^[\d.]+ requests/s \(≈ [\d.]+ concurrent users\) with at least 99% of requests each within TTFT ≤ 500ms and TPOT ≤ 100ms: ([\d.]+)% \([\d.]+–[\d.]+%\) of \d+ requests met the SLO at ([\d.]+) req/s; ([\d.]+)% \([\d.]+–[\d.]+%\) of \d+ at ([\d.]+) req/s, \d+% above \((\d+) runs of at most 14, [\dhms]+ of the 30m time budget\)(; borderline: [^\n]*)?\n`)

// capacityArgs are the arguments of the documented searches.
var capacityArgs = []string{"capacity", "--size", "quick", "--start", "4", "--quiet"}

// capacitySearch is one `vllmperf capacity` run on the in-process
// simulator at quick size with extra args: its output and error.
type capacitySearch struct {
	args        []string
	out, errOut string
	err         error
}

// capacityOnSim runs the searches at once, each on a simulator of its own
// (they sleep through simulated time, so two share the 2 cores without
// moving each other's figures), and returns each search's capacity, the
// failing rate above it, the runs and the output, in the order given.
func capacityOnSim(t *testing.T, argSets ...[]string) (capacity, failing []float64, runs []int, out []string) {
	t.Helper()
	searches := make([]capacitySearch, len(argSets))
	var wg sync.WaitGroup
	for i, args := range argSets {
		wg.Go(func() {
			var stdout, errOut limitedBuffer
			err := run(context.Background(), &stdout, &errOut, append(slices.Clone(capacityArgs), args...))
			searches[i] = capacitySearch{args: args, out: stdout.String(), errOut: errOut.String(), err: err}
		})
	}
	wg.Wait()
	for _, s := range searches {
		require.NoError(t, s.err, "vllmperf capacity %s: stdout:\n%s\nstderr:\n%s", strings.Join(s.args, " "), s.out, s.errOut)
		t.Logf("vllmperf capacity %s:\n%s", strings.Join(s.args, " "), s.out)
		c, f, r := parseStatement(t, s.out)
		capacity, failing, runs, out = append(capacity, c), append(failing, f), append(runs, r), append(out, s.out)
	}
	return capacity, failing, runs, out
}

// parseStatement reads the capacity, the failing rate and the runs from
// the statement at the start of out.
func parseStatement(t *testing.T, out string) (capacity, failing float64, runs int) {
	t.Helper()
	m := statement.FindStringSubmatch(out)
	require.NotNil(t, m, "the statement:\n%s", out)
	good, _ := strconv.ParseFloat(m[1], 64)
	capacity, _ = strconv.ParseFloat(m[2], 64)
	bad, _ := strconv.ParseFloat(m[3], 64)
	failing, _ = strconv.ParseFloat(m[4], 64)
	runs, _ = strconv.Atoi(m[5])
	assert.GreaterOrEqual(t, good, 99.0, "the capacity's goodput meets the SLO")
	assert.Less(t, bad, 99.0, "the failing rate's goodput does not")
	return capacity, failing, runs
}

// TestCapacityOnSimulator: on the simulator, the search finds a rate that
// meets the SLO and one at most 10% above it that does not, in at most 12
// runs (its boundary run twice); with --sim-slowdown 1.5 (every engine step 1.5× longer) the
// capacity falls to about 1/1.5 of it. The two searches' output is the
// figure docs/capacity.md shows: the test fails when the document's
// capacities are more than a bisection step (15%) from what the command
// measures now, and -update rewrites them.
func TestCapacityOnSimulator(t *testing.T) {
	testphase.Alone(t)
	if testing.Short() {
		t.Skip("two capacity searches on the simulator at once, about a minute and a half; skipped with -short")
	}
	slowArgs := []string{"--sim-args", "--sim-slowdown 1.5"}
	caps, above, runs, outs := capacityOnSim(t, nil, slowArgs)
	base, slow, baseOut, slowOut := caps[0], caps[1], outs[0], outs[1]
	for i, name := range []string{"default", "--sim-slowdown 1.5"} {
		assert.LessOrEqual(t, runs[i], 14, "%s: runs", name)
		assert.Greater(t, above[i], caps[i], "%s: the failing rate is above the capacity", name)
		assert.LessOrEqual(t, above[i], 1.1*caps[i], "%s: the failing rate is within 10%% of the capacity", name)
	}
	ratio := slow / base
	t.Logf("capacity %.3g req/s, with --sim-slowdown 1.5 %.3g req/s: ratio %.2f (1/1.5 = 0.67)", base, slow, ratio)
	// Each side is known within its 10% bracket; the simulator's
	// per-request API-server time does not slow down with the engine.
	assert.InDelta(t, 1/1.5, ratio, 0.15, "capacity ratio with --sim-slowdown 1.5")

	block := capacityDoc(baseOut, slowOut, slowArgs, ratio)
	doc, err := os.ReadFile(capacityDocPath)
	require.NoError(t, err)
	begin, end := bytes.Index(doc, []byte(capacityDocBegin)), bytes.Index(doc, []byte(capacityDocEnd))
	require.True(t, begin >= 0 && end > begin, "docs/capacity.md lacks the markers %q and %q", capacityDocBegin, capacityDocEnd)
	if *updateGolden {
		updated := string(doc[:begin+len(capacityDocBegin)]) + "\n" + block + string(doc[end:])
		require.NoError(t, os.WriteFile(capacityDocPath, []byte(updated), 0o644))
		return
	}
	blocks := codeBlock.FindAllStringSubmatch(string(doc[begin:end]), -1)
	require.Len(t, blocks, 2, "docs/capacity.md's figure: two outputs (%s)", rewrite)
	docBase, _, _ := parseStatement(t, blocks[0][1])
	docSlow, _, _ := parseStatement(t, blocks[1][1])
	for _, c := range []struct {
		name     string
		doc, now float64
	}{{"capacity", docBase, base}, {"capacity with --sim-slowdown 1.5", docSlow, slow}} {
		assert.InEpsilon(t, c.doc, c.now, 0.15, "docs/capacity.md's %s (%.3g req/s) drifted from what the command measures now (%.3g req/s): %s", c.name, c.doc, c.now, rewrite)
	}
}

// The figure's place in docs/capacity.md, and how it is rewritten.
const (
	capacityDocPath  = "../../docs/capacity.md"
	capacityDocBegin = "<!-- TestCapacityOnSimulator: begin -->"
	capacityDocEnd   = "<!-- TestCapacityOnSimulator: end -->"
	rewrite          = "go test -run TestCapacityOnSimulator -update ./cmd/vllmperf rewrites it"
)

// codeBlock is a text code block of the figure.
var codeBlock = regexp.MustCompile("(?s)```text\n(.*?)```")

// capacityDoc is the figure: the two commands with their output, and the
// ratio of their capacities.
func capacityDoc(baseOut, slowOut string, slowArgs []string, ratio float64) string {
	cmd := "vllmperf " + strings.Join(capacityArgs, " ")
	return fmt.Sprintf("`%s`:\n\n```text\n%s```\n\n`%s %s %q`:\n\n```text\n%s```\n\nWith `--sim-slowdown 1.5` the capacity is %.2f × the default's (1/1.5 = 0.67).\n",
		cmd, baseOut, cmd, slowArgs[0], slowArgs[1], slowOut, ratio)
}

// TestCapacityNotBracketed: a budget too small to bracket the capacity is
// INCONCLUSIVE (exit 3) with the runs it made and why, never a figure.
func TestCapacityNotBracketed(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs on the simulator, about 25 s; skipped with -short")
	}
	var out, errOut limitedBuffer
	err := run(context.Background(), &out, &errOut, append(slices.Clone(capacityArgs), "--max-runs", "2"))
	require.Error(t, err)
	assert.Equal(t, 3, exitCode(err, &errOut), "exit status of %v", err)
	assert.Contains(t, err.Error(), "every run met the SLO, up to 8 req/s, in 2 runs: raise the start or raise the run budget (capacity.max_runs, --max-runs) (2 runs of at most 2, ")
	assert.True(t, strings.HasPrefix(out.String(), "capacity not found: "), out.String())
	assert.Equal(t, 2, strings.Count(out.String(), "PASS\n"), "the two runs behind it:\n%s", out.String())
}

// TestCapacityOutOfReach is issue 35's done-when on a server that misses
// the SLO at any load (a TPOT limit of 1 ms, which no simulated step
// meets): the search stops after the failing first run and one at about
// one request in flight, says the SLO is out of reach, and exits 1. Runs are capped at 5 s (capacity.max_run), so it ends in well under
// a minute.
func TestCapacityOutOfReach(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs on the simulator, about 20 s; skipped with -short")
	}
	file := filepath.Join(t.TempDir(), "thresholds.yaml")
	require.NoError(t, os.WriteFile(file, []byte("goodput: {ttft: 500ms, tpot: 1ms}\ncapacity: {max_run: 5s}\n"), 0o644))
	var out, errOut limitedBuffer
	err := run(context.Background(), &out, &errOut, []string{"capacity", "--size", "quick", "--start", "2", "--quiet", "--thresholds", file})
	require.Error(t, err)
	assert.Equal(t, 1, exitCode(err, &errOut), "exit status of %v", err)
	text := out.String()
	assert.True(t, strings.HasPrefix(text, "no capacity: the SLO (at least 99% of requests each within TTFT ≤ 500ms and TPOT ≤ 1ms) is out of reach at any load: "), "the statement:\n%s", text)
	// The first run stops at its first miss (a run this short allows
	// none, docs/load-shapes.md); when it held about one request in
	// flight, it is the run at one request in flight, and the search
	// ends there.
	assert.Regexp(t, `is out of reach at any load: even at [\d.]+ req/s, about one request in flight, (with no request waiting in the server's queue|the server's queue peaking at \d+), only 0.0% of requests met it(, and 0.0% at 2 req/s)? \([12] runs of at most 14, \d+s of the 30m time budget\)\n`, text)
	assert.Contains(t, err.Error(), "is out of reach at any load")
	if n := strings.Count(text, "FAIL\n"); n < 1 || n > 2 {
		t.Errorf("%d runs behind it, want 1 or 2:\n%s", n, text)
	}
}
