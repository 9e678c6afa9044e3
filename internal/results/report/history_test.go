package report

import (
	"bytes"
	"fmt"
	htmltemplate "html/template"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/results/history"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// testStore is the history package's recorded store: 16 runs of the
// simulator unchanged, then 8 with --sim-slowdown 1.04, noted at the first.
const testStore = "../history/testdata/sim"

// repoThresholds is the repository's thresholds.yaml (ns/op: none).
func repoThresholds(t *testing.T) *thresholds.Set {
	t.Helper()
	set, err := thresholds.Load("../../../thresholds.yaml")
	require.NoError(t, err)
	return set
}

func TestHistoryPage(t *testing.T) {
	h, err := LoadHistory(testStore, HistoryOptions{Thresholds: repoThresholds(t), MaxBenchmarks: 3})
	require.NoError(t, err)
	require.Len(t, h.Keys, 1)
	k := h.Keys[0]
	assert.Len(t, k.Runs, 24)
	require.NotEmpty(t, k.Changes, "the slowdown is found")
	assert.Len(t, k.Benchmarks, 3, "--max-benchmarks")
	assert.Len(t, k.Left, 1, "the fourth benchmark is listed, not drawn")
	assert.Equal(t, k.Changes[0].Benchmark, k.Benchmarks[0].Name, "the largest change's benchmark comes first")
	for _, b := range k.Benchmarks {
		assert.Len(t, b.Charts, len(TrendUnits), "%s: one chart per headline unit", b.Name)
		assert.Empty(t, b.Missing)
	}

	var buf bytes.Buffer
	require.NoError(t, HistoryHTML(&buf, h))
	page := buf.String()
	for _, want := range []string{"<h3>Change points</h3>", "REGRESSION", h.Check.Headline(), "<h3>Known events</h3>", "--sim-slowdown 1.04",
		"more benchmarks not drawn", "<h3>Runs</h3>", k.Runs[23].ID} {
		assert.True(t, strings.Contains(page, escaped(want)), "history.html lacks %q", want)
	}
	assert.Equal(t, 3*len(TrendUnits), strings.Count(page, `<figure class="chart"`))
	assert.NotContains(t, page, "<script", "no script")
}

// escaped is s as html/template writes text.
func escaped(s string) string {
	if strings.HasPrefix(s, "<") {
		return s // markup of the template itself
	}
	return strings.ReplaceAll(htmltemplate.HTMLEscapeString(s), "+", "&#43;")
}

func TestTrendChartMarks(t *testing.T) {
	h, err := LoadHistory(testStore, HistoryOptions{Thresholds: repoThresholds(t)})
	require.NoError(t, err)
	k := h.Keys[0]
	c := k.Changes[0]
	var chart *Chart
	for _, b := range k.Benchmarks {
		for i := range b.Charts {
			if strings.HasSuffix(b.Charts[i].ID, slug(c.Unit)) && b.Name == c.Benchmark {
				chart = &b.Charts[i]
			}
		}
	}
	require.NotNil(t, chart, "the largest change's chart")
	assert.Contains(t, chart.Legend, "change point")
	assert.Contains(t, chart.Legend, "segment median")
	assert.Contains(t, chart.Legend, "known event")
	assert.Contains(t, chart.Legend, "repetitions", "-count 10: the repetitions are drawn")
	assert.Contains(t, chart.Marks, fmt.Sprintf("%+.1f%%", c.ChangePct), "the change's size is written at its line")
	assert.Contains(t, chart.Colors, hexColor(changeColor))
	assert.Contains(t, chart.Colors, hexColor(markColor))
	assert.Equal(t, "run (oldest first)", chart.XLabel)
}

func TestEventLabels(t *testing.T) {
	for _, tc := range []struct {
		e    history.Event
		want string
	}{
		{history.Event{Kind: history.EventImage, Text: "image vllm/vllm-openai:v0.10.2 → vllm/vllm-openai:v0.11.0"}, "image v0.11.0"},
		{history.Event{Kind: history.EventVLLMVersion, Text: "vllm-version 0.10.2 → 0.11.0"}, "vLLM 0.11.0"},
		{history.Event{Kind: history.EventBaseline, Text: "re-baseline: baselines/gpu.txt changed"}, "re-baseline"},
		{history.Event{Kind: history.EventNote, Text: "driver 550 → 560"}, "driver 550 → 560"},
		{history.Event{Kind: history.EventNote, Text: "a very long note about the runner's new kernel"}, "a very long note about the …"},
	} {
		assert.Equal(t, tc.want, eventLabel(tc.e))
	}
}

// TestAddHistoryToReport: report --history on a results folder of the
// store's setup adds the section and writes history.html next to the
// report; a folder of another setup is an error that names the keys.
func TestAddHistoryToReport(t *testing.T) {
	dir := copyFolder(t, "testdata/results")
	r, err := Load(dir)
	require.NoError(t, err)
	_, err = r.AddHistory(testStore, HistoryOptions{Thresholds: repoThresholds(t)})
	require.ErrorIs(t, err, history.ErrBadInput)
	assert.Contains(t, err.Error(), "no run matches: the store has 24 runs of gpu=sim:rtx4090-seed")

	// The same folder as if measured on the store's setup.
	sumPath := filepath.Join(dir, "summary.json")
	data, err := os.ReadFile(sumPath)
	require.NoError(t, err)
	data = bytes.ReplaceAll(data, []byte(`"sim:rtx4090"`), []byte(`"sim:rtx4090-seed"`))
	require.NoError(t, os.WriteFile(sumPath, data, 0o644))
	r, err = Load(dir)
	require.NoError(t, err)
	page, err := r.AddHistory(testStore, HistoryOptions{Thresholds: repoThresholds(t)})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, HistoryFile), page)
	assert.Equal(t, HistoryFile, r.HistoryLink)
	require.NotNil(t, r.History)
	assert.LessOrEqual(t, len(r.History.Keys[0].Benchmarks), ReportBenchmarks)
	paths, err := WriteFiles(r)
	require.NoError(t, err)
	html, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	assert.Contains(t, string(html), `<section id="history">`)
	assert.Contains(t, string(html), `<a href="history.html">`)
	_, err = os.Stat(page)
	require.NoError(t, err)
}
