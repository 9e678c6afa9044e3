package suite_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// TestCapacityInTheSuite: a session's capacity search runs the scenario's
// levels on the session's server under the thresholds' budget (2 runs
// here: 4 and 8 req/s both meet the SLO, so the capacity is not found and
// no unit is reported), and the results folder keeps each run under its
// level and the search with its statement; the report shows it. The
// folder's config says how many GPUs the profile used. Its runs are real
// time (25 s under -race): it runs in the alone phase's suite lane.
func TestCapacityInTheSuite(t *testing.T) {
	testphase.Alone(t)
	testphase.Lane(t, testphase.LaneSuite)
	if testing.Short() {
		t.Skip("two 8 s runs on the simulator; skipped with -short")
	}
	file := filepath.Join(t.TempDir(), "thresholds.yaml")
	require.NoError(t, os.WriteFile(file, []byte("goodput: {ttft: 500ms, tpot: 100ms}\ncapacity: {max_runs: 2}\n"), 0o644))
	set, err := thresholds.Load(file)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), "results")
	s, err := suite.New(suite.Config{Server: []server.Option{server.WithBackend(server.KindSim)}, Size: scenario.Quick, Thresholds: set, ResultsDir: dir})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ss, err := s.Start(ctx, "basic")
	require.NoError(t, err)
	r, m, err := ss.Capacity(ctx, "slo-capacity")
	require.NoError(t, ss.Close(context.WithoutCancel(ctx)))
	require.NoError(t, err)
	require.NoError(t, s.Close())

	assert.Len(t, r.Trials, 2)
	assert.False(t, r.Found)
	assert.Contains(t, r.Reason, "every run met the SLO, up to 8 req/s, in 2 runs")
	assert.Empty(t, m, "no capacity, no unit")

	sum, err := results.Read(dir)
	require.NoError(t, err)
	var names []string
	for _, run := range sum.Runs {
		names = append(names, run.Name)
	}
	assert.Equal(t, []string{"profile=basic/scenario=startup", "profile=basic/scenario=slo-capacity/rate=4", "profile=basic/scenario=slo-capacity/rate=8"}, names)
	require.Len(t, sum.Capacities, 1)
	assert.Equal(t, r.Statement(), sum.Capacities[0].Statement)
	assert.Equal(t, "1", sum.Config["basic"][results.ConfigGPUs])
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(html), `<section id="capacity">`)
}
