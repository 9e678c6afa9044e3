package history

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/perf/benchfmt"

	"github.com/vllmperf/vllmperf/internal/harness/gate"
	"github.com/vllmperf/vllmperf/internal/harness/thresholds"
	"github.com/vllmperf/vllmperf/internal/harness/verdict"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// update makes TestHistoryQuality rewrite its table in docs/history.md.
var update = flag.Bool("update", false, "rewrite the measured part of docs/history.md")

const (
	// testStore is the recorded store: 16 runs of the embedded simulator
	// (profile basic, scenario ttft-tpot, quick size, -count 10), then 8
	// with --sim-slowdown 1.04 (testdata/record.sh).
	testStore = "testdata/sim"
	// unchangedRuns is how many runs of testStore are unchanged.
	unchangedRuns = 16
	// docsPath and its markers hold the measured table.
	docsPath      = "../../../docs/history.md"
	beginQuality  = "<!-- history quality: begin -->"
	endQuality    = "<!-- history quality: end -->"
	readmePath    = "../../../README.md"
	beginReadme   = "<!-- history figures: begin -->"
	endReadme     = "<!-- history figures: end -->"
	beginRecorded = "<!-- history recorded: begin -->"
	endRecorded   = "<!-- history recorded: end -->"
	// The resampled histories of the measurement, and their length.
	aaHistories, stepHistories, historyRuns = 300, 100, 16
)

// repoThresholds is the repository's thresholds.yaml.
func repoThresholds(t *testing.T) *thresholds.Set {
	t.Helper()
	set, err := thresholds.Load("../../../thresholds.yaml")
	require.NoError(t, err)
	return set
}

// storeRuns reads testStore.
func storeRuns(t *testing.T) []*Run {
	t.Helper()
	s, err := Open(testStore)
	require.NoError(t, err)
	runs, err := s.Runs()
	require.NoError(t, err)
	require.Len(t, runs, unchangedRuns+8, "testdata/sim: 16 unchanged runs and 8 slowed")
	return runs
}

// pool holds the recorded repetitions of every benchmark, in the order the
// files list the benchmarks. go test -count prints a benchmark's
// repetitions together, one benchmark after the other, so a repetition of
// one point has no partner in another: each benchmark is resampled on its
// own.
type pool struct {
	names []string
	reps  map[string][]*benchfmt.Result
}

func newPool(runs []*Run) pool {
	p := pool{reps: map[string][]*benchfmt.Result{}}
	for _, r := range runs {
		for _, res := range r.Input.Results {
			name := string(res.Name)
			if _, seen := p.reps[name]; !seen {
				p.names = append(p.names, name)
			}
			p.reps[name] = append(p.reps[name], res)
		}
	}
	return p
}

// resampled builds a history of len(pools) runs: run i holds, for every
// benchmark, reps repetitions drawn with replacement from pools[i], with
// the template run's record and Unit lines.
func resampled(t *testing.T, rng *rand.Rand, template *Run, pools []pool, reps int) []*Run {
	t.Helper()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := make([]*Run, len(pools))
	for i, p := range pools {
		in := &gate.Input{Name: fmt.Sprintf("resampled run %d", i+1), Units: template.Input.Units}
		for _, name := range p.names {
			for range reps {
				in.Results = append(in.Results, p.reps[name][rng.IntN(len(p.reps[name]))])
			}
		}
		benches, err := in.Benchmarks(nil)
		require.NoError(t, err)
		rec := template.Record
		rec.ID, rec.Date, rec.Notes = fmt.Sprintf("r%02d", i+1), start.Add(time.Duration(i)*time.Hour), nil
		runs[i] = &Run{Record: rec, Input: in, Benchmarks: benches}
	}
	return runs
}

// headline are the series the done criterion names: TPOT p50 and tok/s of
// every ttft-tpot point.
func headline(c Change) bool {
	return strings.Contains(c.Benchmark, "scenario=ttft-tpot") && (c.Unit == "tpot-p50-ns" || c.Unit == "tok/s")
}

// quality is what the measurement found.
type quality struct {
	aaAlarms, aaChanges, aaSeries             int
	stepAll, stepFound, stepSeries, stepWrong int
}

func measure(t *testing.T) quality {
	runs := storeRuns(t)
	set := repoThresholds(t)
	reps := len(runs[0].Benchmarks[0].Values["ns/op"])
	unchanged, slowed := newPool(runs[:unchangedRuns]), newPool(runs[unchangedRuns:])
	rng := rand.New(rand.NewPCG(22, 1))
	var q quality
	check := func(pools []pool) *CheckReport {
		khs, err := Group(resampled(t, rng, runs[0], pools, reps), Filter{}, set)
		require.NoError(t, err)
		rep, err := Check(khs, DefaultCheck)
		require.NoError(t, err)
		return rep
	}
	for range aaHistories {
		pools := make([]pool, historyRuns)
		for i := range pools {
			pools[i] = unchanged
		}
		rep := check(pools)
		q.aaSeries += rep.Tested
		q.aaChanges += len(rep.Changes)
		if len(rep.Changes) > 0 {
			q.aaAlarms++
		}
	}
	for range stepHistories {
		pools := make([]pool, historyRuns)
		for i := range pools {
			pools[i] = unchanged
			if i >= historyRuns/2 {
				pools[i] = slowed
			}
		}
		rep := check(pools)
		found := 0
		for _, c := range rep.Changes {
			switch {
			case c.Run.Index < historyRuns/2-1 || c.Run.Index > historyRuns/2+1:
				q.stepWrong++
			case headline(c) && c.Regression:
				found++
			}
		}
		q.stepSeries += 6
		q.stepFound += found
		if found == 6 {
			q.stepAll++
		}
	}
	return q
}

func pct(n, of int) string { return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(of)) }

// TestHistoryQuality measures the check's false alarms and its detection
// of the recorded slowdown by resampling the recorded runs (docs/history.md,
// "How often it is right"), and fails when docs/history.md's table is not
// what it measures; -update rewrites the table.
func TestHistoryQuality(t *testing.T) {
	testphase.Measured(t)
	switch {
	case testing.Short():
		t.Skip("a measurement of some 12 seconds: run without -short")
	case raceEnabled:
		t.Skip("a measurement of some 12 seconds, minutes under the race detector: make test runs it without -race, with TestTiming*")
	}
	q := measure(t)
	var b strings.Builder
	fmt.Fprintf(&b, "\n| resampled histories (16 runs, 10 repetitions of every point each) | histories | with a change point | change points per series tested |\n|---|--:|--:|--:|\n")
	fmt.Fprintf(&b, "| unchanged: every run drawn from runs 1–16 | %d | %s (%d): false alarms | %s (%d of %d) |\n\n", aaHistories, pct(q.aaAlarms, aaHistories), q.aaAlarms,
		pct(q.aaChanges, q.aaSeries), q.aaChanges, q.aaSeries)
	fmt.Fprintf(&b, "| +4%% from run 9: runs 9–16 drawn from runs 17–24 | histories | TPOT p50 and tok/s of all 3 prompts at run 9 ± 1 | those 6 series found at run 9 ± 1 | change points placed off run 9 ± 1 (any series) |\n|---|--:|--:|--:|--:|\n")
	fmt.Fprintf(&b, "| step at run 9 | %d | %s (%d) | %s (%d of %d) | %d |\n", stepHistories, pct(q.stepAll, stepHistories), q.stepAll,
		pct(q.stepFound, q.stepSeries), q.stepFound, q.stepSeries, q.stepWrong)
	table := b.String()
	t.Log(table)

	docBlock(t, docsPath, beginQuality, endQuality, table)
	docBlock(t, readmePath, beginReadme, endReadme, fmt.Sprintf("false alarms in %s of %d resampled unchanged histories; the +4%% step found on TPOT p50 and tok/s of all three prompts at run 9 ± 1 in %s of %d resampled histories",
		pct(q.aaAlarms, aaHistories), aaHistories, pct(q.stepAll, stepHistories), stepHistories))
}

// docBlock checks that the file at path holds content between begin and
// end, or writes it there with -update.
func docBlock(t *testing.T, path, begin, end, content string) {
	t.Helper()
	doc, err := os.ReadFile(path)
	require.NoError(t, err)
	i, j := bytes.Index(doc, []byte(begin)), bytes.Index(doc, []byte(end))
	require.True(t, i >= 0 && j > i, "%s: no %q … %q markers", filepath.Clean(path), begin, end)
	if *update {
		var out bytes.Buffer
		out.Write(doc[:i+len(begin)])
		out.WriteString(content)
		out.Write(doc[j:])
		require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
		return
	}
	if got := string(doc[i+len(begin) : j]); got != content {
		t.Errorf("%s between %s and %s is not what the test measures: run\n  go test -run '%s' ./internal/harness/history/ -update\nand review the diff.\nwritten:\n%s\nmeasured:\n%s", filepath.Clean(path), begin, end, t.Name(), got, content)
	}
}

// TestRecordedHistories is the done criterion on the recorded
// runs: the 16 runs from the unchanged runs 9–16 to the eighth slowed run
// have one change point at run 9 (± 1) on TPOT and tok/s, and the 16
// unchanged runs have none.
func TestRecordedHistories(t *testing.T) {
	runs := storeRuns(t)
	set := repoThresholds(t)
	check := func(f Filter) *CheckReport {
		khs, err := Group(runs, f, set)
		require.NoError(t, err)
		rep, err := Check(khs, DefaultCheck)
		require.NoError(t, err)
		return rep
	}

	rep := check(Filter{Until: runs[unchangedRuns-1].ID})
	require.Equal(t, unchangedRuns, rep.Keys[0].Runs)
	unchangedHeadline := rep.Headline()
	t.Logf("unchanged: %s", unchangedHeadline)
	require.Empty(t, rep.Changes, "no change point in 16 unchanged runs")
	require.Equal(t, verdict.OutcomePass, rep.Outcome())

	rep = check(Filter{Since: runs[8].ID})
	require.Equal(t, 16, rep.Keys[0].Runs)
	t.Logf("slowdown: %s", rep.Headline())
	var text bytes.Buffer
	require.NoError(t, rep.WriteText(&text))
	t.Log(text.String())
	require.Equal(t, verdict.OutcomeFail, rep.Outcome())
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	require.Equal(t, MarkdownDetails, strings.Count(md.String(), "<details>"), "the runs around the largest changes only")
	require.Contains(t, md.String(), fmt.Sprintf("%d more changes", len(rep.Changes)-MarkdownDetails))
	seen := map[string]int{}
	for _, c := range rep.Changes {
		if c.Unit != "tpot-p50-ns" && c.Unit != "tok/s" {
			continue
		}
		seen[c.Unit]++
		require.True(t, c.Run.Index >= 7 && c.Run.Index <= 9, "%s of %s starts at run %d, not 9 ± 1", c.Unit, c.Benchmark, c.Run.Index+1)
		require.True(t, c.Regression)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n`go test -run TestRecordedHistories -v ./internal/harness/history/`: runs 9–24 of the store (8 unchanged, then the 8 slowed; run 9 of this window is the first slowed run), %s; the TPOT p50 and tok/s change points:\n\n", rep.Method())
	fmt.Fprintf(&b, "| benchmark | unit | from run | before → after | change | p | confidence |\n|---|---|--:|---|--:|--:|--:|\n")
	for _, c := range rep.Changes {
		if headline(c) {
			fmt.Fprintf(&b, "| `%s` | %s | %d | %s → %s | %s | %.2g | %s |\n", strings.TrimPrefix(c.Benchmark, "Perf/profile=basic/scenario=ttft-tpot/"),
				c.Unit, c.Run.Index+1, fmtValue(c.Unit, c.Before), fmtValue(c.Unit, c.After), fmtPct(c.ChangePct), c.P, fmtConfidence(c.P))
		}
	}
	fmt.Fprintf(&b, "\nIn all: %s. The 16 unchanged runs (1–16): %s.\n", rep.Headline(), unchangedHeadline)
	docBlock(t, docsPath, beginRecorded, endRecorded, b.String())
	require.Positive(t, seen["tpot-p50-ns"], "a TPOT change point")
	require.Positive(t, seen["tok/s"], "a tok/s change point")
	for _, c := range rep.Changes {
		if !headline(c) {
			continue
		}
		require.LessOrEqual(t, slices.IndexFunc(rep.Changes, func(o Change) bool {
			return o.Benchmark == c.Benchmark && o.Unit == c.Unit && o.Run.Index != c.Run.Index
		}), -1, "one change point per series: %s %s", c.Benchmark, c.Unit)
	}
}
