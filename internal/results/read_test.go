package results_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/results"
)

// folder writes a results folder with the given files' contents.
func folder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	return dir
}

const (
	oneRun  = `{"config": {}, "runs": [{"name": "profile=basic/scenario=x/conc=2", "profile": "basic", "rep": 0, "concurrency": 2, "result": {}, "metrics": {}, "server": {"drain_wait_ms": 0}, "checks": []}], "knees": []}`
	samples = `{"run": "profile=basic/scenario=x/conc=2", "rep": 0, "index": 0, "warmup": true, "scheduled": "2026-12-03T06:00:00Z", "sent": "2026-12-03T06:00:00Z", "done": "2026-12-03T06:00:01Z", "chunks": [{"at_ns": 20000000, "tokens": 1}], "prompt_tokens": 10, "completion_tokens": 1}

{"run": "profile=basic/scenario=x/conc=2", "rep": 0, "index": 1, "scheduled": "2026-12-03T06:00:01Z", "sent": "2026-12-03T06:00:01Z", "done": "2026-12-03T06:00:02Z", "chunks": [{"at_ns": 30000000, "tokens": 1}, {"at_ns": 50000000, "tokens": 1}], "prompt_tokens": 10, "completion_tokens": 2}
`
	series = `{"run": "profile=basic/scenario=x/conc=2", "rep": 0, "t_s": -0.5, "running": 1, "waiting": 0, "kv_usage": 0.01, "gen_tok_s": 0, "prompt_tok_s": 0}
{"run": "profile=basic/scenario=x/conc=2", "rep": 0, "t_s": 0.25, "running": 2, "waiting": 1, "kv_usage": 0.02, "gen_tok_s": 40, "prompt_tok_s": 80}`
)

func TestReadFolder(t *testing.T) {
	dir := folder(t, map[string]string{results.SummaryFile: oneRun, results.SamplesFile: samples, results.TimeSeriesFile: series})
	f, err := results.ReadFolder(dir)
	require.NoError(t, err)
	require.Len(t, f.Summary.Runs, 1)
	k := f.Summary.Runs[0].Key()
	got := f.Samples(k)
	require.Len(t, got, 2, "the blank line is skipped")
	assert.True(t, got[0].Warmup)
	ttft, ok := got[1].TTFT()
	assert.True(t, ok)
	assert.Equal(t, 30*time.Millisecond, ttft)
	pts := f.Series(k)
	require.Len(t, pts, 2)
	assert.Equal(t, 0.25, pts[1].T)
	assert.Equal(t, 1.0, pts[1].Waiting)
	assert.Empty(t, f.Samples(results.RunKey{Name: k.Name, Rep: 1}), "another repetition has none")
}

func TestReadFolderErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		err   string
	}{
		// The folder has no summary: not a results folder.
		{"no summary", map[string]string{results.SamplesFile: samples, results.TimeSeriesFile: series}, "a results folder? make bench writes them"},
		// summary.json is there, samples.jsonl is not.
		{"no samples", map[string]string{results.SummaryFile: oneRun, results.TimeSeriesFile: series}, "samples.jsonl is missing: the folder is incomplete"},
		// A line that is not JSON names the file and the line.
		{"bad sample line", map[string]string{results.SummaryFile: oneRun, results.SamplesFile: samples + "{\"run\": 3}\n", results.TimeSeriesFile: series}, "samples.jsonl:4: json"},
		// The same for the time series.
		{"bad series line", map[string]string{results.SummaryFile: oneRun, results.SamplesFile: samples, results.TimeSeriesFile: "nope\n"}, "timeseries.jsonl:1: invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := results.ReadFolder(folder(t, tc.files))
			assert.ErrorContains(t, err, tc.err)
		})
	}
}
