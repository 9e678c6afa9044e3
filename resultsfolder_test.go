package perf_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/results/history"
	harnessreport "github.com/vllmperf/vllmperf/internal/results/report"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// TestResultsFolderOfGoTest is issue 40's done-when, bounded: one go test
// process, a test and a benchmark of the suite in it (TestPerfPrefixCachingOff
// and one point of BenchmarkPerf), with VLLMPERF_RESULTS and no tee. Both
// write the one folder (before, the second refused it and failed the run);
// the report renders the runs of both; the folder carries the benchmark
// lines as its own bench.txt, which `vllmperf history add` takes.
func TestResultsFolderOfGoTest(t *testing.T) {
	testphase.Alone(t)
	if testing.Short() {
		t.Skip("runs the suite in a go test process of its own")
	}
	dir := filepath.Join(t.TempDir(), "results")
	env := gateEnv(t.TempDir(), t.TempDir(), "VLLMPERF_BACKEND=sim", "VLLMPERF_RESULTS="+dir)
	code, out := runCmd(t, env, "go", "test", "-count=1", "-run", "^TestPerfPrefixCachingOff$",
		"-bench", "Perf/profile=basic/scenario=ttft-tpot/prompt=short", "-benchtime", "1x", ".")
	require.Equal(t, 0, code, "go test with VLLMPERF_RESULTS=%s:\n%s", dir, out)

	bench, err := os.ReadFile(filepath.Join(dir, results.BenchFile))
	require.NoError(t, err, "the suite's own bench.txt")
	assert.Contains(t, string(bench), "\nBenchmarkPerf/profile=basic/scenario=ttft-tpot/prompt=short/conc=1-")
	assert.Contains(t, string(bench), "\nbackend: sim\n")

	var text bytes.Buffer
	require.NoError(t, harnessreport.Print(&text, dir, "", nil))
	for _, run := range []string{"profile=basic/scenario=ttft-tpot/prompt=short/conc=1", "profile=basic-no-prefix-caching/scenario=prefix-reuse/conc=8"} {
		assert.Contains(t, text.String(), run, "the report renders every test's runs")
	}

	store, err := history.Init(filepath.Join(t.TempDir(), "history"))
	require.NoError(t, err)
	r, err := store.Add(dir, history.AddOptions{Commit: "0123abc"})
	require.NoError(t, err, "history add on the folder, without a tee")
	assert.Equal(t, 1, r.Record.Benchmarks)
	assert.True(t, strings.Contains(r.Key, "backend=sim"), "key %s", r.Key)
}
