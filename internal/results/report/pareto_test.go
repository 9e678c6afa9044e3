package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

func TestParetoFrontier(t *testing.T) {
	pt := func(profile string, c int, perGPU, perUser float64) ParetoPoint {
		return ParetoPoint{Profile: profile, Concurrency: c, PerGPU: perGPU, PerUser: perUser}
	}
	lines := [][]ParetoPoint{
		{pt("a", 1, 50, 50), pt("a", 8, 300, 37), pt("a", 32, 450, 14)},
		// b: beats a at c=8 on both axes; its c=1 is beaten by a's c=1 on
		// per user at a hair more per GPU, so both stay (neither beats the
		// other on both); its c=32 is beaten by a's
		{pt("b", 1, 51, 49), pt("b", 8, 320, 40), pt("b", 32, 440, 13)},
	}
	var names []string
	for _, p := range ParetoFrontier(lines) {
		names = append(names, p.Name())
	}
	assert.Equal(t, []string{"a c=1", "b c=1", "b c=8", "a c=32"}, names)
	assert.Empty(t, ParetoFrontier(nil))
}

// TestParetoPoints: per user is tok/s over the concurrency, per GPU
// tok/s over the profile's GPUs from the folder's config, 1 (and said)
// when the folder has none.
func TestParetoPoints(t *testing.T) {
	r := &Report{
		Profiles: []ProfileConfig{{Name: "tp2", GPUs: 2}, {Name: "old"}},
		Sweeps: []Sweep{
			{Profile: "tp2", Scenario: "s", Points: []SweepPoint{{Concurrency: 4, Metrics: map[string]float64{units.TokPerSec: 400}}}},
			{Profile: "old", Scenario: "s", Points: []SweepPoint{
				{Concurrency: 4, Metrics: map[string]float64{units.TokPerSec: 300}},
				{Concurrency: 8, Metrics: map[string]float64{}}, // no tok/s: left out
			}},
		},
	}
	pts, unknown := r.paretoPoints()
	require.Len(t, pts, 2)
	assert.Equal(t, []ParetoPoint{{Profile: "tp2", Scenario: "s", Concurrency: 4, PerUser: 100, PerGPU: 200}}, pts[0])
	assert.Equal(t, []ParetoPoint{{Profile: "old", Scenario: "s", Concurrency: 4, PerUser: 75, PerGPU: 300}}, pts[1])
	assert.Equal(t, []string{"old"}, unknown)
	ch, err := r.paretoChart()
	require.NoError(t, err)
	assert.Contains(t, ch.Caption, "does not say how many GPUs old used")
	assert.Contains(t, ch.Legend, "Pareto frontier")
	var b bytes.Buffer
	(&md{w: &b}).frontier(r)
	out := b.String()
	tp2, old := strings.Index(out, "| tp2 c=4 | 200.0 | 100.0 |"), strings.Index(out, "| old c=4 | 300.0 | 75.0 |")
	assert.True(t, tp2 > 0 && old > tp2, "report.md's frontier, by tok/s per GPU:\n%s", out)
}
