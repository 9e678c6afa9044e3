package merge

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/results/report"
)

// The fixtures are two processes' folders of `go test -bench
// 'Perf/profile=P/scenario=ttft-tpot/prompt=short' -benchtime 1x` on the
// embedded simulator at quick size, one per profile (basic,
// low-latency); basic's holds a traces/ file besides.

// copyDir copies a fixture folder into a temporary one the test may edit.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// editConfig sets key of every profile's configuration in dir's summary.
func editConfig(t *testing.T, dir, key, value string) {
	t.Helper()
	sum, err := results.Read(dir)
	require.NoError(t, err)
	for _, cfg := range sum.Config {
		cfg[key] = value
	}
	data, err := json.Marshal(sum)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, results.SummaryFile), data, 0o644))
}

// TestFoldersJoinsEverything: the merged folder holds both profiles'
// configurations, runs, requests, sampler points and benchmark lines,
// the traces, and a report rendered from it; the gate reads its bench.txt
// with every benchmark of both.
func TestFoldersJoinsEverything(t *testing.T) {
	a, b := copyDir(t, "testdata/basic"), copyDir(t, "testdata/low-latency")
	require.NoError(t, os.WriteFile(filepath.Join(b, report.GateFile), []byte("{}\n"), 0o644))
	out := filepath.Join(t.TempDir(), "merged")
	res, err := Folders(out, []string{a, b})
	require.NoError(t, err)
	assert.Equal(t, []string{"basic", "low-latency"}, res.Profiles)
	assert.True(t, res.Benchmarks)
	assert.Equal(t, []string{filepath.Join(b, report.GateFile)}, res.Left, "a part's gate.json is left out")

	f, err := results.ReadFolder(out)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"basic", "low-latency"}, slices.Collect(maps.Keys(f.Summary.Config)))
	for _, part := range []string{a, b} {
		pf, err := results.ReadFolder(part)
		require.NoError(t, err)
		for _, r := range pf.Summary.Runs {
			assert.Equal(t, len(pf.Samples(r.Key())), len(f.Samples(r.Key())), "the requests of %s", r.Name)
			assert.Equal(t, len(pf.Series(r.Key())), len(f.Series(r.Key())), "the sampler points of %s", r.Name)
			assert.True(t, slices.ContainsFunc(f.Summary.Runs, func(m results.Run) bool { return m.Key() == r.Key() }), "run %s", r.Name)
		}
	}
	assert.Equal(t, res.Runs, len(f.Summary.Runs))

	for _, name := range []string{report.HTMLFile, report.MarkdownFile, "traces/profile=basic.json"} {
		assert.FileExists(t, filepath.Join(out, name))
	}
	assert.NoFileExists(t, filepath.Join(out, report.GateFile))
	md, err := os.ReadFile(filepath.Join(out, report.MarkdownFile))
	require.NoError(t, err)
	for _, name := range []string{"profile=basic/scenario=ttft-tpot/prompt=short/conc=1", "profile=low-latency/scenario=ttft-tpot/prompt=short/conc=1"} {
		assert.Contains(t, string(md), name, "the report renders every folder's runs")
	}

	merged, err := input.ReadFile(filepath.Join(out, results.BenchFile))
	require.NoError(t, err)
	var want []string
	for _, part := range []string{a, b} {
		in, err := input.ReadFile(filepath.Join(part, results.BenchFile))
		require.NoError(t, err)
		want = append(want, benchNames(t, in)...)
	}
	assert.ElementsMatch(t, want, benchNames(t, merged))
}

// benchNames are the benchmarks of a gate input with their configuration
// (backend, gpu, flags): a key that leaked from one folder's lines onto
// the next's would show here.
func benchNames(t *testing.T, in *input.Input) []string {
	t.Helper()
	bs, err := in.Benchmarks([]string{"backend", "gpu", "flags"})
	require.NoError(t, err)
	var out []string
	for _, b := range bs {
		out = append(out, fmt.Sprintf("%s %v %d units %d runs", b.Name, b.Config, len(b.Units), len(b.Values[b.Units[0]])))
	}
	return out
}

// TestFoldersRefuses: folders of different keys (named, with both
// values), folders that share a profile, a mix with and without
// bench.txt, and an output folder that holds something are refused, and
// nothing is written.
func TestFoldersRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, a, b string) (out string)
		want string
	}{
		// The same model on another GPU: not one key.
		{"gpu", func(t *testing.T, _, b string) string { editConfig(t, b, "gpu", "NVIDIA H100 80GB HBM3"); return "" },
			`gpu is "sim:rtx4090-seed" in`},
		// Another vLLM image.
		{"image", func(t *testing.T, _, b string) string {
			editConfig(t, b, "image", "vllm/vllm-openai:v0.10.0")
			return ""
		},
			`image is`},
		{"size", func(t *testing.T, _, b string) string { editConfig(t, b, "size", "full"); return "" },
			`size is "quick" in`},
		// The same profile ran in both.
		{"overlap", func(t *testing.T, _, b string) string {
			require.NoError(t, os.RemoveAll(b))
			require.NoError(t, os.CopyFS(b, os.DirFS("testdata/basic")))
			return ""
		}, "profile basic is in both"},
		// A test run (no bench.txt) with a benchmark run.
		{"bench", func(t *testing.T, _, b string) string {
			require.NoError(t, os.Remove(filepath.Join(b, results.BenchFile)))
			return ""
		}, "holds a bench.txt but"},
		// The output folder holds an earlier merge.
		{"out", func(t *testing.T, _, _ string) string {
			out := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(out, results.SummaryFile), []byte("{}"), 0o644))
			return out
		}, "already holds summary.json"},
		// The output is one of the inputs.
		{"out-is-input", func(_ *testing.T, a, _ string) string { return a }, "is one of the folders merged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := copyDir(t, "testdata/basic"), copyDir(t, "testdata/low-latency")
			out := tc.edit(t, a, b)
			if out == "" {
				out = filepath.Join(t.TempDir(), "merged")
			}
			_, err := Folders(out, []string{a, b})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			if tc.name != "out" && tc.name != "out-is-input" {
				assert.NoDirExists(t, out, "a refused merge writes nothing")
			}
		})
	}
}

// TestFoldersNeedsFolders: no folder, or one that is not a results
// folder, is an error that says what to give.
func TestFoldersNeedsFolders(t *testing.T) {
	_, err := Folders(filepath.Join(t.TempDir(), "m"), nil)
	require.ErrorContains(t, err, "no results folder given")
	_, err = Folders(filepath.Join(t.TempDir(), "m"), []string{t.TempDir()})
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "results folder"), err.Error())
}

// TestWriteBenchClearsConfig: the configuration lines of the folders
// before are cleared ahead of the next folder's lines.
func TestWriteBenchClearsConfig(t *testing.T) {
	out := t.TempDir()
	parts := []*part{{bench: []byte("gpu: A\nflags: x\nBenchmarkA 1 1 ns/op\n")}, {bench: []byte("gpu: B\nBenchmarkB 1 1 ns/op")}}
	require.NoError(t, writeBench(out, parts, &Result{}))
	got, err := os.ReadFile(filepath.Join(out, results.BenchFile))
	require.NoError(t, err)
	assert.Equal(t, "gpu: A\nflags: x\nBenchmarkA 1 1 ns/op\n\nflags:\ngpu:\ngpu: B\nBenchmarkB 1 1 ns/op\n", string(got))
}

// TestJoinJSON: summary.json's values are joined by their JSON kind, so a
// field merge does not know is joined or refused, never dropped.
func TestJoinJSON(t *testing.T) {
	for _, tc := range []struct {
		name, a, b, want, err string
	}{
		// Lists (runs, knees, a list added later) one after another.
		{"list", `[1,2]`, `[3]`, `[1,2,3]`, ""},
		{"null list", `null`, `[3]`, `[3]`, ""},
		// Objects (config) key by key.
		{"object", `{"basic":{"gpu":"x"}}`, `{"low-latency":{"gpu":"x"}}`, `{"basic":{"gpu":"x"},"low-latency":{"gpu":"x"}}`, ""},
		{"object, same key and value", `{"a":1}`, `{"a": 1}`, `{"a":1}`, ""},
		{"object, one key two values", `{"a":1}`, `{"a":2}`, "", "a differs (1, 2)"},
		// Anything else only when every folder has the same.
		{"same", `"v1"`, `"v1"`, `"v1"`, ""},
		{"different", `"v1"`, `"v2"`, "", `differs ("v1", "v2")`},
	} {
		got, err := joinJSON(json.RawMessage(tc.a), json.RawMessage(tc.b), true)
		if tc.err != "" {
			require.Error(t, err, tc.name)
			assert.Contains(t, err.Error(), tc.err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.JSONEq(t, tc.want, string(got), tc.name)
	}
}

// TestFoldersKeepsUnknownFields: a summary.json field merge does not know
// reaches the merged folder; one that differs between the folders is
// refused, naming it.
func TestFoldersKeepsUnknownFields(t *testing.T) {
	addField := func(dir, value string) {
		path := filepath.Join(dir, results.SummaryFile)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var top map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(data, &top))
		top["runner_calibration"] = json.RawMessage(value)
		data, err = json.Marshal(top)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, data, 0o644))
	}
	a, b := copyDir(t, "testdata/basic"), copyDir(t, "testdata/low-latency")
	addField(a, `{"score": 1.5}`)
	addField(b, `{"score": 1.5}`)
	out := filepath.Join(t.TempDir(), "merged")
	_, err := Folders(out, []string{a, b})
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(out, results.SummaryFile))
	require.NoError(t, err)
	assert.Contains(t, string(data), `"runner_calibration"`)

	addField(b, `{"score": 2}`)
	out = filepath.Join(t.TempDir(), "merged")
	_, err = Folders(out, []string{a, b})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "summary.json's runner_calibration")
	assert.NoDirExists(t, out, "a failed merge leaves no half folder")
}
