package capacity

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

func base() scenario.Point {
	return scenario.Point{
		Classes:         []workload.Class{{Name: "w", Weight: 1, Config: workload.Config{PromptTokens: 64, MaxTokens: 8, IgnoreEOS: true}}},
		SamplerInterval: 100 * time.Millisecond,
	}
}

// TestRunnerPoint: an open-loop run lasts max(MinDuration, MinRequests /
// rate); a closed-loop run MinDuration; each named by its level.
func TestRunnerPoint(t *testing.T) {
	for _, c := range []struct {
		mode     Mode
		level    float64
		key      string
		duration time.Duration
	}{
		// 100 requests at 2/s need 50 s, more than the 10 s minimum
		{Rate, 2, "rate=2", 50 * time.Second},
		// at 40/s, 100 requests take 2.5 s: the 10 s minimum decides
		{Rate, 40, "rate=40", 10 * time.Second},
		{Rate, 12.5, "rate=12.5", 10 * time.Second},
		{Concurrency, 8, "conc=8", 10 * time.Second},
	} {
		b := base()
		b.Load.Burstiness = 1
		r := Runner{Base: b, Mode: c.mode, Sizing: Sizing{MinRequests: 100, MinDuration: 10 * time.Second, Grace: 5 * time.Second}}
		p := r.Point(c.level)
		assert.Equal(t, c.key, p.Key)
		assert.Equal(t, c.duration, p.Load.Duration, c.key)
		assert.Equal(t, 5*time.Second, p.Load.Grace, c.key)
		assert.Zero(t, p.Load.Requests, "%s: bounded by time", c.key)
		require.NoError(t, p.Load.Validate(), c.key)
		if c.mode == Concurrency {
			assert.Equal(t, 8, p.Load.Concurrency)
			assert.Zero(t, p.Load.Burstiness, "burstiness shapes open loops only")
		} else {
			assert.Equal(t, c.level, p.Load.Rate)
		}
	}
}

func TestMinDuration(t *testing.T) {
	assert.Equal(t, 10*time.Second, MinDuration(stats.SLO{TTFT: 500 * time.Millisecond}, 0.1))
	assert.Equal(t, 40*time.Second, MinDuration(stats.SLO{TTFT: 2 * time.Second}, 0.1))
	assert.Equal(t, MinDurationFloor, MinDuration(stats.SLO{TPOT: time.Second}, 0.1), "no TTFT limit")
	assert.Equal(t, MinDurationFloor, MinDuration(stats.SLO{TTFT: 100 * time.Millisecond}, 0.1), "the floor")
}

// TestRunnerOnSimulator: a probe on the simulator measures a trial (a
// light load meets the SLO), a search over it runs its levels, and a
// probe of a server that is gone is an error, not a failed level.
func TestRunnerOnSimulator(t *testing.T) {
	p, err := profile.Builtin("basic")
	require.NoError(t, err)
	srv, err := server.Run(context.Background(), p.WithSimArgs("--sim-cold-start", "0"), server.WithBackend(server.KindSim))
	require.NoError(t, err)
	var seen []Trial
	r := Runner{Server: srv, Base: base(), Mode: Rate, SLO: stats.SLO{TTFT: 2 * time.Second, TPOT: 500 * time.Millisecond},
		Sizing: Sizing{MinRequests: 8, MinDuration: time.Second}, OnRun: func(_ *result.Result, t Trial) { seen = append(seen, t) }}
	tr, err := r.Probe(context.Background(), 8)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, tr.Requests, 4, "about 8 requests in a second at 8/s")
	assert.Equal(t, tr.Requests, tr.Good, "a light load meets a loose SLO")
	assert.True(t, tr.HasP99)
	assert.Positive(t, tr.Users)
	assert.Positive(t, tr.ReqPerSec)
	assert.True(t, tr.HasWaiting, "the simulator exposes its queue")
	require.Len(t, seen, 1)

	cfg := Config{Mode: Rate, Start: 4, SLO: r.SLO, Capacity: thresholds.Capacity{GoodputMin: 0.99, Tolerance: 0.1, MaxRuns: 2, MaxRun: time.Minute, MaxTime: time.Hour}}
	res, err := Search(context.Background(), cfg, r.Probe)
	require.NoError(t, err)
	assert.Len(t, res.Trials, 2, "the budget of 2 runs")
	assert.Equal(t, []float64{4, 8}, []float64{res.Trials[0].Level, res.Trials[1].Level}, "doubling while runs pass")

	require.NoError(t, srv.Close(context.Background()))
	_, err = r.Probe(context.Background(), 8)
	assert.Error(t, err, "a server that is gone stops the search")
}
