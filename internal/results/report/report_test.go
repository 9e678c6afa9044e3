package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/gate/render"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// testdata/ramp is the results folder of the ramp scenario on a
// simulator slowed 3×:
//
//	VLLMPERF_SIM_ARGS="--sim-slowdown 3" VLLMPERF_PROFILES=basic,low-latency VLLMPERF_SCENARIOS=ramp \
//	  VLLMPERF_RESULTS=DIR go test -short -run '^$' -bench Perf -benchtime 1x .
//
// testdata/results is a results folder from
//
//	VLLMPERF_SIZE=quick VLLMPERF_PROFILES=basic,low-latency VLLMPERF_SCENARIOS=concurrency-sweep \
//	  VLLMPERF_RESULTS=DIR go test -run '^$' -bench Perf -benchtime 1x .
//
// with the gate.json of
//
//	vllmperf gate --baseline internal/gate/testdata/bench/base.txt \
//	  --new internal/gate/testdata/bench/regression.txt \
//	  --thresholds internal/gate/testdata/thresholds.yaml --format json

// copyFolder copies a results folder into a temporary one, so that a test
// can write reports into it.
func copyFolder(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
	return dst
}

// copyWithout copies src leaving out the named files.
func copyWithout(t *testing.T, src string, leave ...string) string {
	t.Helper()
	dst := copyFolder(t, src)
	for _, f := range leave {
		require.NoError(t, os.Remove(filepath.Join(dst, f)))
	}
	return dst
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	assert.Equal(t, string(want), string(got), "%s differs: go test ./internal/results/report/ -run %s -update rewrites it", path, t.Name())
}

// TestMarkdownGolden renders report.md of testdata's folder, with and
// without its gate.json.
func TestMarkdownGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		folder string
		leave  []string // files left out of the folder
		golden string
	}{
		// The whole folder: sweeps, diagnosis, checks and the gate.
		{"with gate", "testdata/results", nil, "report.md"},
		// No gate.json: no gate section, nothing else changes.
		{"without gate", "testdata/results", []string{GateFile}, "report-nogate.md"},
		// Ramp-ups: each one's statement and rate windows.
		{"ramp-ups", "testdata/ramp", nil, "report-ramp.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyWithout(t, tc.folder, tc.leave...)
			r, err := Load(dir)
			require.NoError(t, err)
			r.Name = "results" // the temporary folder's name varies
			var buf bytes.Buffer
			require.NoError(t, Markdown(&buf, r))
			golden(t, tc.golden, buf.Bytes())
		})
	}
}

// TestWriteFiles writes both files into the folder; the HTML holds every
// chart inline and fetches nothing.
func TestWriteFiles(t *testing.T) {
	dir := copyFolder(t, "testdata/results")
	r, err := Load(dir)
	require.NoError(t, err)
	paths, err := WriteFiles(r)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, HTMLFile), filepath.Join(dir, MarkdownFile)}, paths)
	html, err := os.ReadFile(paths[0])
	require.NoError(t, err)
	page := string(html)

	charts := r.BuildCharts().All()
	// 1 throughput + 1 Pareto + 2 latency + 2 profiles × (2 CDFs + 3 time series).
	assert.Len(t, charts, 14)
	assert.Equal(t, len(charts), strings.Count(page, `<figure class="chart"`))
	assert.Equal(t, len(charts), strings.Count(page, "<svg "))
	for _, marker := range []string{`id="curves"`, `id="diagnosis"`, `id="distributions"`, `id="timeseries"`, `id="gate"`, `id="checks"`, `id="runs"`, "rule-high-ttft", "FAIL: 4 regressions"} {
		assert.Contains(t, page, marker)
	}
	// Self-contained: no script, stylesheet, image or font from anywhere.
	for _, re := range []string{`<script`, `<link`, `<img`, `<iframe`, `@import`, `url\(`, `(?i)(src|href)="(https?:)?//`} {
		assert.NotRegexp(t, regexp.MustCompile(re), page)
	}
	// Every link is to the page itself.
	for _, m := range regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		assert.True(t, strings.HasPrefix(m[1], "#"), "link %q leaves the page", m[1])
	}
	// No temporary file left behind.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), "."), "left behind: %s", e.Name())
	}
}

// TestChartsLabelled: every chart has a title, axis labels with units and
// a legend, and plots data; in the ramp-ups' folder too.
func TestChartsLabelled(t *testing.T) {
	r, err := Load(copyFolder(t, "testdata/results"))
	require.NoError(t, err)
	ramps, err := Load(copyFolder(t, "testdata/ramp"))
	require.NoError(t, err)
	units := regexp.MustCompile(`\((ms|s|%)[;,) ]|\(requests|tokens/s|share of requests|^requests$|\(%\)`)
	for _, c := range append(r.BuildCharts().All(), ramps.BuildCharts().All()...) {
		assert.NotEmpty(t, c.Title, c.ID)
		assert.Regexp(t, units, c.XLabel, "%s: x axis label names its unit", c.ID)
		assert.Regexp(t, units, c.YLabel, "%s: y axis label names its unit", c.ID)
		assert.NotEmpty(t, c.Legend, "%s: legend", c.ID)
		assert.Positive(t, c.Points, "%s: data points", c.ID)
		assert.Contains(t, string(c.SVG), "<title id=\""+c.ID+"-title\">", c.ID)
	}
}

// TestReadGate reads what vllmperf gate --format json writes, and refuses
// what it does not.
func TestReadGate(t *testing.T) {
	dir := t.TempDir()
	base, err := input.ReadFile("../../gate/testdata/bench/base.txt")
	require.NoError(t, err)
	next, err := input.ReadFile("../../gate/testdata/bench/regression.txt")
	require.NoError(t, err)
	set, err := thresholds.Load("../../gate/testdata/thresholds.yaml")
	require.NoError(t, err)
	rep, err := gate.Compare(base, next, set, gate.Options{})
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, render.Of(rep).WriteJSON(&buf))
	require.NoError(t, os.WriteFile(filepath.Join(dir, GateFile), buf.Bytes(), 0o644))

	g, err := ReadGate(dir)
	require.NoError(t, err)
	got, want := string(g.Result), string(rep.Outcome())
	assert.Equal(t, want, got)
	assert.Equal(t, rep.Headline(), g.Summary)
	assert.Len(t, g.Rows, len(rep.Rows))
	assert.Len(t, g.Notable(), rep.Count(gate.Regression)+rep.Count(gate.Improvement)+rep.Count(gate.Inconclusive)+rep.Count(gate.Missing))
	for i, row := range rep.Rows {
		assert.Equal(t, row.Verdict, g.Rows[i].Verdict)
		assert.Equal(t, row.Unit, g.Rows[i].Unit)
	}

	for _, tc := range []struct {
		name    string
		content string // "" leaves the file out
		err     string // "" for no error
	}{
		// No gate.json: no gate, no error.
		{"absent", "", ""},
		// Not JSON at all.
		{"not json", "FAIL: 4 regressions\n", "gate.json: invalid character"},
		// JSON, but not the gate's.
		{"other json", `{"runs": []}`, `has no "result" or "rows"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.content != "" {
				require.NoError(t, os.WriteFile(filepath.Join(dir, GateFile), []byte(tc.content), 0o644))
			}
			g, err := ReadGate(dir)
			if tc.err == "" {
				assert.NoError(t, err)
				assert.Nil(t, g)
				return
			}
			assert.ErrorContains(t, err, tc.err)
		})
	}
}

// TestLoadErrors: a folder that is not a results folder, or is one in
// part, is an error naming the file.
func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leave []string // files removed from testdata's folder
		edit  func(t *testing.T, dir string)
		err   string
	}{
		// Not a results folder.
		{"no summary", []string{"summary.json"}, nil, "a results folder? make bench writes them"},
		// A folder without its samples.
		{"no samples", []string{"samples.jsonl"}, nil, "samples.jsonl is missing"},
		// A broken line names the file and the line.
		{"bad series line", nil, func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, "timeseries.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString("{\"run\": \n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, "timeseries.jsonl:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyWithout(t, "testdata/results", tc.leave...)
			if tc.edit != nil {
				tc.edit(t, dir)
			}
			_, err := Load(dir)
			assert.ErrorContains(t, err, tc.err)
		})
	}
}

// TestWithoutSweep: a folder with no concurrency sweep (one point per
// profile, no knee) still has its distributions, time series and
// diagnosis, and says that it has no sweep.
func TestWithoutSweep(t *testing.T) {
	dir := copyWithout(t, "testdata/results", GateFile)
	f, err := results.ReadFolder(dir)
	require.NoError(t, err)
	s := f.Summary
	var keep []results.Run
	for _, r := range s.Runs {
		if r.Point == "" || r.Point == "conc=8" {
			keep = append(keep, r)
		}
	}
	s.Runs, s.Knees = keep, []results.Knee{}
	data, err := json.Marshal(s)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, results.SummaryFile), data, 0o644))

	r, err := Load(dir)
	require.NoError(t, err)
	assert.Empty(t, r.Sweeps)
	c := r.BuildCharts()
	assert.Nil(t, c.Throughput)
	assert.Empty(t, c.Latency)
	// 2 profiles × (2 CDFs + 3 time series).
	assert.Len(t, c.All(), 10)
	var html, md bytes.Buffer
	require.NoError(t, HTML(&html, r))
	require.NoError(t, Markdown(&md, r))
	assert.Contains(t, html.String(), "The folder has no concurrency sweep.")
	assert.Contains(t, md.String(), "The folder has no concurrency sweep.")
	assert.NotContains(t, html.String(), `id="gate"`)
}

// TestRampCharts: each ramp-up of the folder has its statement, its
// table of rate windows and two charts (throughput, P99 latency) that mark
// the rates where its P99s left the SLO and its throughput stopped
// following; the latency chart draws the SLO's limits.
func TestRampCharts(t *testing.T) {
	r, err := Load(copyFolder(t, "testdata/ramp"))
	require.NoError(t, err)
	require.Len(t, r.Ramps, 2, "basic's and low-latency's ramps")
	c := r.BuildCharts()
	require.Len(t, c.Ramps, len(r.Ramps))
	for i, rr := range r.Ramps {
		require.NotNil(t, rr.SLOExit, rr.Run)
		require.NotNil(t, rr.Saturation, rr.Run)
		assert.Contains(t, rr.Statement(), "left the SLO at "+rate(*rr.SLOExit)+" req/s offered", rr.Run)
		assert.Contains(t, rr.Statement(), "stopped following the arrivals at "+rate(*rr.Saturation)+" req/s offered", rr.Run)
		assert.Len(t, r.rampTables()[i].Rows, len(rr.Windows), "%s: a row per window", rr.Run)
		marks := []string{"SLO left " + rate(*rr.SLOExit) + "/s", "saturated " + rate(*rr.Saturation) + "/s"}
		for j, series := range []int{3, 2} { // offered, arrived, achieved; TTFT, TPOT
			ch := c.Ramps[i][j]
			require.NotNil(t, ch, "%s: both charts drawn (%v)", rr.Run, c.Missing)
			assert.Equal(t, marks, ch.Marks, ch.ID)
			assert.Equal(t, series*len(rr.Windows), ch.Points, "%s: every window's points", ch.ID)
		}
		assert.Subset(t, c.Ramps[i][1].Legend, []string{"TTFT p99", "TPOT p99", "TTFT SLO 500 ms", "TPOT SLO 100 ms"}, rr.Run)
	}
}
