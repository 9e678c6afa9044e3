package suite_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/results/report"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
)

// simSuite opens a suite on the in-process simulator (no cold start)
// writing the results folder dir.
func simSuite(t *testing.T, dir string) *suite.Suite {
	t.Helper()
	s, err := suite.New(suite.Config{Server: []server.Option{server.WithBackend(server.KindSim)}, Size: scenario.Quick,
		SimArgs: []string{"--sim-cold-start", "0"}, ResultsDir: dir})
	require.NoError(t, err)
	return s
}

// TestResultsFolderOfOneProcess: two suites of one process (TestPerf and
// TestPerfPrefixCachingOff in `go test -run Perf .`) write one results
// folder: the second is not refused, summary.json lists the runs of both,
// a profile's variant runs under its own name with its flags said, and
// the report waits for the last suite. A folder an earlier process left
// is still refused, with the message that says what to do (issue 40).
func TestResultsFolderOfOneProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "results")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	first := simSuite(t, dir)
	ss, err := first.Start(ctx, "basic")
	require.NoError(t, err)
	require.NoError(t, ss.Close(ctx))

	second := simSuite(t, dir) // while the first is open
	require.NoError(t, first.Close())
	assert.FileExists(t, filepath.Join(dir, results.SummaryFile), "each Close writes the summary so far")
	assert.NoFileExists(t, filepath.Join(dir, report.HTMLFile), "the report waits for the last suite of the folder")
	p, err := profile.Builtin("basic")
	require.NoError(t, err)
	p = p.WithExtraArgs("--max-num-seqs", "8")
	p.Name = "basic-8-seqs"
	ss, err = second.StartProfile(ctx, p)
	require.NoError(t, err)
	require.NoError(t, ss.Close(ctx))
	require.NoError(t, second.Close())
	require.NoError(t, second.Close(), "a second Close does nothing")

	third := simSuite(t, dir) // after both closed: the same process still
	ss, err = third.Start(ctx, "basic")
	require.NoError(t, err)
	require.NoError(t, ss.Close(ctx))
	require.NoError(t, third.Close())

	f, err := results.ReadFolder(dir)
	require.NoError(t, err)
	var names []string
	for _, r := range f.Summary.Runs {
		names = append(names, fmt.Sprintf("%s#%d", r.Name, r.Rep))
		assert.NotEmpty(t, f.Samples(r.Key()), "%s has its samples", r.Name)
	}
	assert.Equal(t, []string{"profile=basic/scenario=startup#0", "profile=basic-8-seqs/scenario=startup#0", "profile=basic/scenario=startup#1"}, names)
	assert.Equal(t, "profile basic", f.Summary.Config["basic"]["flags"])
	assert.Equal(t, "profile basic-8-seqs with --max-num-seqs 8", f.Summary.Config["basic-8-seqs"]["flags"])
	assert.FileExists(t, filepath.Join(dir, report.HTMLFile))

	// A folder that holds results no suite of this process wrote.
	earlier := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(earlier, results.SummaryFile), []byte(`{"runs":[]}`), 0o644))
	_, err = suite.New(suite.Config{ResultsDir: earlier})
	require.Error(t, err)
	assert.Equal(t, "results: "+earlier+" already holds summary.json: give a new folder (make bench uses results/<UTC timestamp>)", err.Error())
}

// printer is a test binary whose Run prints out and returns code.
type printer struct {
	out  string
	code int
}

func (p printer) Run() int {
	fmt.Print(p.out)
	return p.code
}

// TestMainWritesBench: suite.Main gives a benchmark run's results folder
// the output as bench.txt, keeps a tee's, and writes nothing for a folder
// no suite of the process wrote or for a run without benchmarks.
func TestMainWritesBench(t *testing.T) {
	bench := flag.Lookup("test.bench")
	require.NotNil(t, bench, "the testing package's -test.bench flag")
	old := bench.Value.String()
	t.Cleanup(func() { _ = bench.Value.Set(old) })
	const out = "backend: sim\nBenchmarkPerf/profile=basic/scenario=x/conc=1-2 \t 1\t 5 ns/op\n\x16--- FAIL: BenchmarkPerf/y\nPASS\n"
	const plain = "backend: sim\nBenchmarkPerf/profile=basic/scenario=x/conc=1-2 \t 1\t 5 ns/op\n--- FAIL: BenchmarkPerf/y\nPASS\n"
	for _, tc := range []struct {
		name    string
		benches string // -test.bench
		open    bool   // a suite of the process opens the folder
		tee     string // bench.txt already there ("" none)
		want    string // bench.txt after ("" none)
	}{
		// go test -bench with VLLMPERF_RESULTS: the output, less
		// test2json's framing byte.
		{"benchmarks", "Perf", true, "", plain},
		// make bench tees the output into the folder: that file stays.
		{"a tee's file", "Perf", true, "tee'd\n", "tee'd\n"},
		// No suite wrote the folder (no benchmark of the suite matched).
		{"folder not written", "Perf", false, "", ""},
		// go test -run Perf: tests only, no benchmark lines to keep.
		{"no benchmarks", "", true, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "results")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			t.Setenv(suite.EnvResults, dir)
			require.NoError(t, bench.Value.Set(tc.benches))
			path := filepath.Join(dir, results.BenchFile)
			if tc.tee != "" {
				require.NoError(t, os.WriteFile(path, []byte(tc.tee), 0o644))
			}
			if tc.open {
				s, err := suite.New(suite.Config{ResultsDir: dir})
				require.NoError(t, err)
				require.NoError(t, s.Close())
			}
			assert.Equal(t, 7, suite.Main(printer{out, 7}), "Main returns the tests' exit status")
			got, err := os.ReadFile(path)
			if tc.want == "" {
				assert.ErrorIs(t, err, os.ErrNotExist, "no bench.txt: %q", got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
		})
	}
}
