package gpuset

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/results"
)

// fakeOptions runs testdata/fake-go, which writes package merge's
// fixture folders (profiles basic and low-latency) after a pause.
func fakeOptions(t *testing.T, sets []Set, jobs []Job, extra ...string) (Options, *bytes.Buffer) {
	t.Helper()
	fake, err := filepath.Abs("testdata/fake-go")
	require.NoError(t, err)
	fixtures, err := filepath.Abs("../../results/merge/testdata")
	require.NoError(t, err)
	dir := t.TempDir()
	var out bytes.Buffer
	env := append(os.Environ(), "FAKE_GO_FIXTURES="+fixtures, EnvGPUSets+"=leaked", "VLLMPERF_PROFILES=all")
	return Options{Sets: sets, Jobs: jobs, Out: filepath.Join(dir, "merged"), Parts: filepath.Join(dir, "parts"),
		TestArgs: []string{"-run", "^$", "-bench", "Perf", "."}, Go: fake, Dir: ".", Env: append(env, extra...), Stdout: &out}, &out
}

// TestRunSpreadsAndMerges: two profiles on two sets run at the same time,
// each with its own set and results folder (and no VLLMPERF_GPU_SETS of
// its own); the merged folder lists them in the jobs' order whatever
// order they ended in.
func TestRunSpreadsAndMerges(t *testing.T) {
	o, out := fakeOptions(t, []Set{{"a"}, {"b"}}, []Job{{"low-latency", 1}, {"basic", 1}}, "FAKE_GO_SLEEP=1")
	res, err := Run(t.Context(), o)
	require.NoError(t, err, out.String())
	require.Len(t, res.Parts, 2)
	p, q := res.Parts[0], res.Parts[1]
	assert.NotEqual(t, p.Set.String(), q.Set.String(), "each process has a set of its own")
	assert.True(t, p.Start.Before(q.End) && q.Start.Before(p.End), "the two profiles ran at the same time: %v–%v and %v–%v", p.Start, p.End, q.Start, q.End)
	assert.Equal(t, []string{"low-latency", "basic"}, res.Merged.Profiles, "the jobs' order")
	assert.Equal(t, 0, res.Code())
	for _, part := range res.Parts {
		log, err := os.ReadFile(part.Log)
		require.NoError(t, err)
		assert.Contains(t, string(log), "profiles="+part.Profile+" gpus="+part.Set.String()+" sets=unset")
	}
	assert.Contains(t, out.String(), "[basic on GPUs ")
	sum, err := results.Read(o.Out)
	require.NoError(t, err)
	assert.Equal(t, "low-latency", sum.Runs[0].Profile, "summary.json in the jobs' order")
	bench, err := os.ReadFile(filepath.Join(o.Out, results.BenchFile))
	require.NoError(t, err)
	assert.Less(t, strings.Index(string(bench), "profile=low-latency/"), strings.Index(string(bench), "profile=basic/"), "bench.txt in the jobs' order")
}

// TestRunOneProcessPerSet: three profiles on two sets, one of them two
// GPUs wide: at no moment do two processes hold one set, and the wide
// profile runs on the wide set.
func TestRunOneProcessPerSet(t *testing.T) {
	o, out := fakeOptions(t, []Set{{"0"}, {"1", "2"}}, []Job{{"basic", 1}, {"low-latency", 2}, {"high-throughput", 1}}, "FAKE_GO_SLEEP=0.2")
	fixtures := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(fixtures, "basic"), os.DirFS("../../results/merge/testdata/basic")))
	require.NoError(t, os.CopyFS(filepath.Join(fixtures, "low-latency"), os.DirFS("../../results/merge/testdata/low-latency")))
	require.NoError(t, os.MkdirAll(filepath.Join(fixtures, "high-throughput"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(fixtures, "high-throughput", results.SummaryFile), []byte(`{"config":{},"runs":[],"knees":[]}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(fixtures, "high-throughput", results.BenchFile), nil, 0o644))
	o.Env = append(o.Env, "FAKE_GO_FIXTURES="+fixtures)
	res, err := Run(t.Context(), o)
	require.NoError(t, err, out.String())
	assert.Equal(t, "1,2", res.Parts[1].Set.String(), "the two-GPU profile on the two-GPU set")
	for i, p := range res.Parts {
		for _, q := range res.Parts[i+1:] {
			if p.Set.String() == q.Set.String() {
				assert.False(t, p.Start.Before(q.End) && q.Start.Before(p.End), "%s and %s held set %s at once", p.Profile, q.Profile, p.Set)
			}
		}
	}
}

// TestRunFailures: a failed benchmark (exit 1) is merged with the code
// kept; a process that cannot run (exit 2) is an error naming the
// profile, its set and its log, and nothing is merged.
func TestRunFailures(t *testing.T) {
	o, out := fakeOptions(t, []Set{{"a"}, {"b"}}, []Job{{"basic", 1}, {"low-latency", 1}}, "FAKE_GO_SLEEP=0", "FAKE_GO_EXIT=1")
	res, err := Run(t.Context(), o)
	require.NoError(t, err, out.String())
	assert.Equal(t, 1, res.Code())
	assert.FileExists(t, filepath.Join(o.Out, results.SummaryFile))

	o, _ = fakeOptions(t, []Set{{"a"}, {"b"}}, []Job{{"basic", 1}, {"low-latency", 1}}, "FAKE_GO_SLEEP=0", "FAKE_GO_EXIT=2")
	_, err = Run(t.Context(), o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "profile basic on GPUs ")
	assert.Contains(t, err.Error(), ".log")
	assert.NoDirExists(t, o.Out)
}
