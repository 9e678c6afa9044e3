package history

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// TestAddRefusesAFileNotWhole: a bench file cut mid-line, one cut at a
// line end that lacks a run its summary.json lists, and one with a NaN
// or infinite value are refused as bad input naming the file; nothing is
// stored.
func TestAddRefusesAFileNotWhole(t *testing.T) {
	whole := benchText(simConfig(), oneRun(2e7))
	cutAt := strings.LastIndex(whole, "tok/s") + 3 // "tok/s" cut to "tok"
	lastBench := strings.LastIndex(whole, "\nBenchmark") + 1
	checks := []check.Result{{Name: "requests", Status: verdict.Pass}}
	for _, tc := range []struct {
		name string
		src  func(t *testing.T) string
		want string
	}{
		{"cut mid-line", func(t *testing.T) string { return benchFile(t, whole[:cutAt]) }, "ends inside a line"},
		{"cut at a line end, summary lists the run", func(t *testing.T) string {
			dir := resultsDir(t, whole[:lastBench], checks, time.Time{})
			sum, err := results.Read(dir)
			require.NoError(t, err)
			second := sum.Runs[0]
			second.Rep = 1
			sum.Runs = append(sum.Runs, second)
			data, err := json.Marshal(sum)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, results.SummaryFile), data, 0o644))
			return dir
		}, "holds 1 result line(s) of profile=basic/scenario=ttft-tpot/prompt=short/conc=1 where"},
		{"go test output cut at a line end", func(t *testing.T) string {
			return benchFile(t, "PASS\nok  \tgithub.com/vllmperf/vllmperf\t1.0s\n"+whole[:lastBench])
		}, "not its closing PASS, FAIL or ok line"},
		{"NaN", func(t *testing.T) string {
			return benchFile(t, benchText(simConfig(), oneRun(math.NaN())))
		}, "a value must be a finite number"},
		{"-Inf", func(t *testing.T) string {
			return benchFile(t, benchText(simConfig(), oneRun(math.Inf(-1))))
		}, "a value must be a finite number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Init(filepath.Join(t.TempDir(), "h"))
			require.NoError(t, err)
			_, err = s.Add(tc.src(t), AddOptions{Commit: "a"})
			require.ErrorIs(t, err, ErrBadInput)
			assert.Contains(t, err.Error(), tc.want)
			runs, err := s.Runs()
			require.NoError(t, err)
			assert.Empty(t, runs)
		})
	}
}

// TestSameRun: a summary's run name matches its bench line with or
// without the GOMAXPROCS suffix, and no other.
func TestSameRun(t *testing.T) {
	for _, tc := range []struct {
		full, name string
		want       bool
	}{
		{"Perf/profile=basic/scenario=startup-2", "profile=basic/scenario=startup", true},
		{"Perf/profile=basic/scenario=startup", "profile=basic/scenario=startup", true},
		{"Perf/profile=basic/scenario=startup-x", "profile=basic/scenario=startup", false},
		{"Perf/profile=basic/scenario=startup2-2", "profile=basic/scenario=startup", false},
		{"Perf/profile=basic/scenario=startup-", "profile=basic/scenario=startup", false},
	} {
		assert.Equal(t, tc.want, sameRun(tc.full, tc.name), "%s vs %s", tc.full, tc.name)
	}
}

// benchFile writes text as a bench file of its own.
func benchFile(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "bench.txt")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

// TestAddTakesATestsRun: a results folder whose summary.json lists a run
// the bench file holds no line of (a TestPerf* test's, written beside the
// benchmarks by one go test process) is whole, and is stored.
func TestAddTakesATestsRun(t *testing.T) {
	whole := benchText(simConfig(), oneRun(2e7))
	dir := resultsDir(t, whole, []check.Result{{Name: "requests", Status: verdict.Pass}}, time.Time{})
	sum, err := results.Read(dir)
	require.NoError(t, err)
	test := sum.Runs[0]
	test.Name, test.Profile = "profile=basic-no-prefix-caching/scenario=startup", "basic-no-prefix-caching"
	sum.Runs = append(sum.Runs, test)
	data, err := json.Marshal(sum)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, results.SummaryFile), data, 0o644))
	s, err := Init(filepath.Join(t.TempDir(), "h"))
	require.NoError(t, err)
	_, err = s.Add(dir, AddOptions{Commit: "a"})
	require.NoError(t, err)
}
