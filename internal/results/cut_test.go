package results_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/results"
)

// TestReadFolderCutLastLine: a samples.jsonl whose last line was cut
// mid-write (no line end) is read without that line, with a note naming
// the file and line; the lines before it are kept. A bad line that has
// its line end is still an error.
func TestReadFolderCutLastLine(t *testing.T) {
	cut := samples + `{"run": "profile=basic/scenario=x/conc=2", "rep": 0, "ind`
	f, err := results.ReadFolder(folder(t, map[string]string{results.SummaryFile: oneRun, results.SamplesFile: cut, results.TimeSeriesFile: series}))
	require.NoError(t, err)
	assert.Len(t, f.Samples(f.Summary.Runs[0].Key()), 2)
	require.Len(t, f.Cut, 1)
	assert.Contains(t, f.Cut[0], "samples.jsonl:4: the last line is cut short")

	_, err = results.ReadFolder(folder(t, map[string]string{results.SummaryFile: oneRun, results.SamplesFile: cut + "\n", results.TimeSeriesFile: series}))
	assert.ErrorContains(t, err, "samples.jsonl:4:")
}
