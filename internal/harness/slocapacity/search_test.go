package slocapacity

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/harness/stats"
	"github.com/vllmperf/vllmperf/internal/harness/thresholds"
	"github.com/vllmperf/vllmperf/internal/harness/units"
)

// threshold is a deployment whose goodput is 100% up to capacity and 90%
// above it, with users = level / 2.
func threshold(capacity float64) Probe {
	return func(_ context.Context, level float64) (Trial, error) {
		good := 100
		if level > capacity {
			good = 90
		}
		return Trial{Requests: 100, Good: good, ReqPerSec: level, Users: level / 2, TTFTP99: 100, TPOTP99: 20, HasP99: true}, nil
	}
}

func config(mode Mode, start float64) Config {
	return Config{Mode: mode, Start: start, Capacity: thresholds.DefaultCapacity, SLO: stats.SLO{TTFT: 500 * time.Millisecond, TPOT: 100 * time.Millisecond}}
}

func TestSearchFinds(t *testing.T) {
	for _, c := range []struct {
		name     string
		cfg      Config
		capacity float64
		runs     int // the most runs the case may take
	}{
		// bracketing up from 1 req/s: 1, 2, 4, 8, 16 then bisection
		{"rate from below", config(Rate, 1), 14.3, 9},
		// bracketing down from far above
		{"rate from above", config(Rate, 100), 14.3, 8},
		// the capacity right at a doubled level
		{"rate at a bracket level", config(Rate, 1), 8, 8},
		// a slow deployment
		{"rate below 1", config(Rate, 1), 0.3, 6},
		// a fast one, with a start near it (from 1 the budget would not
		// do: TestSearchBudget)
		{"rate high with a start near it", config(Rate, 500), 900, 6},
		// concurrency stops at neighbours: 5 passes, 6 fails
		{"concurrency", config(Concurrency, 1), 5, 6},
		{"concurrency from above", config(Concurrency, 64), 20, 8},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Search(context.Background(), c.cfg, threshold(c.capacity))
			require.NoError(t, err)
			require.True(t, r.Found, r.Reason)
			assert.LessOrEqual(t, len(r.Trials), c.runs)
			assert.LessOrEqual(t, len(r.Trials), c.cfg.Capacity.MaxRuns)
			assert.LessOrEqual(t, r.Pass.Level, c.capacity, "the capacity found passed")
			assert.Greater(t, r.Fail.Level, c.capacity, "the level above failed")
			if c.cfg.Mode == Rate {
				assert.LessOrEqual(t, r.Fail.Level, 1.1*r.Pass.Level+1e-9, "failing level within 10%% of the passing one")
			} else {
				assert.Equal(t, r.Pass.Level+1, r.Fail.Level)
			}
			assert.Empty(t, r.Reason)
		})
	}
}

// TestSearchAnyCapacity: from a start of 1 req/s, every capacity between
// 0.05 and 200 req/s is found in at most 12 runs, within 10%.
func TestSearchAnyCapacity(t *testing.T) {
	for capacity := 0.05; capacity < 200; capacity *= 1.07 {
		r, err := Search(context.Background(), config(Rate, 1), threshold(capacity))
		require.NoError(t, err)
		require.True(t, r.Found, "capacity %.3f: %s", capacity, r.Reason)
		require.LessOrEqual(t, len(r.Trials), 12, "capacity %.3f", capacity)
		require.LessOrEqual(t, r.Pass.Level, capacity)
		require.Greater(t, r.Fail.Level, capacity)
		require.LessOrEqual(t, r.Fail.Level, 1.1*r.Pass.Level+1e-9)
	}
}

func TestSearchNotFound(t *testing.T) {
	small := config(Rate, 1)
	small.Capacity.MaxRuns = 4
	for _, c := range []struct {
		name     string
		cfg      Config
		probe    Probe
		reason   string
		passRuns int
	}{
		// 1, 2, 4, 8 all pass with a budget of 4
		{"all pass", small, threshold(1000), "every run met the SLO, up to 8 req/s, in 4 runs", 4},
		// 1, 0.5, 0.25, 0.125 all fail
		{"all fail", small, threshold(0.01), "every run failed the SLO, down to 0.125 req/s", 0},
		// 1, 2, 4 pass, 8 fails: 4 to 8 is not within 10%
		{"bracket too wide", small, threshold(5), "4 req/s passes and 8 req/s fails, 100% apart, after 4 runs", 3},
		// one request in flight fails
		{"concurrency 1 fails", config(Concurrency, 4), threshold(0.5), "fails even with one request in flight", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Search(context.Background(), c.cfg, c.probe)
			require.NoError(t, err)
			assert.False(t, r.Found)
			assert.Contains(t, r.Reason, c.reason)
			passed := 0
			for _, tr := range r.Trials {
				if tr.Pass {
					passed++
				}
			}
			assert.Equal(t, c.passRuns, passed)
			assert.Empty(t, r.Metrics(), "no capacity, no figure")
			assert.Equal(t, "capacity not found: "+r.Reason, r.Statement())
		})
	}
}

// TestSearchBudget: a capacity too far from the start for the budget is
// reported as a bound, not as the capacity.
func TestSearchBudget(t *testing.T) {
	r, err := Search(context.Background(), config(Rate, 1), threshold(3000))
	require.NoError(t, err)
	assert.False(t, r.Found)
	assert.Len(t, r.Trials, 12)
	assert.Contains(t, r.Reason, "every run met the SLO, up to 2048 req/s, in 12 runs: raise the start or the run budget")
}

func TestSearchProbeError(t *testing.T) {
	down := errors.New("server down")
	calls := 0
	probe := func(ctx context.Context, level float64) (Trial, error) {
		calls++
		if calls == 3 {
			return Trial{}, down
		}
		return threshold(10)(ctx, level)
	}
	r, err := Search(context.Background(), config(Rate, 1), probe)
	require.ErrorIs(t, err, down)
	assert.Contains(t, err.Error(), "capacity search at 4 req/s")
	require.NotNil(t, r)
	assert.Len(t, r.Trials, 2, "the runs before the error are kept")
	assert.False(t, r.Found)
}

// TestPassRule: a run passes when Good/Requests ≥ the minimum; a run
// without requests fails.
func TestPassRule(t *testing.T) {
	for _, c := range []struct {
		requests, good int
		pass           bool
	}{
		{100, 99, true},
		{100, 98, false},
		{1000, 990, true},
		{1000, 989, false},
		{0, 0, false},
	} {
		probe := func(context.Context, float64) (Trial, error) { return Trial{Requests: c.requests, Good: c.good}, nil }
		cfg := config(Rate, 1)
		cfg.Capacity.MaxRuns = 2
		r, err := Search(context.Background(), cfg, probe)
		require.NoError(t, err)
		assert.Equal(t, c.pass, r.Trials[0].Pass, "%d of %d good", c.good, c.requests)
	}
}

func TestConfigValidate(t *testing.T) {
	good := config(Rate, 1)
	for _, c := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"mode", func(c *Config) { c.Mode = "users" }, `mode "users": want rate`},
		{"start", func(c *Config) { c.Start = 0 }, "start 0: want a positive"},
		{"start inf", func(c *Config) { c.Start = math.Inf(1) }, "start +Inf"},
		{"fractional concurrency", func(c *Config) { c.Mode, c.Start = Concurrency, 1.5 }, "start 1.5"},
		{"goodput", func(c *Config) { c.Capacity.GoodputMin = 0 }, "capacity.goodput_min"},
		{"tolerance", func(c *Config) { c.Capacity.Tolerance = 0 }, "capacity.tolerance"},
		{"runs", func(c *Config) { c.Capacity.MaxRuns = 1 }, "max runs 1"},
		{"slo", func(c *Config) { c.SLO = stats.SLO{} }, "no goodput SLO"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := good
			c.edit(&cfg)
			_, err := Search(context.Background(), cfg, threshold(1))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	_, err := ParseMode("rate")
	require.NoError(t, err)
}

func TestStatementAndMetrics(t *testing.T) {
	r, err := Search(context.Background(), config(Rate, 1), threshold(14.3))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{units.CapacityRate: r.Pass.Level, units.CapacityUsers: r.Pass.Level / 2}, r.Metrics())
	s := r.Statement()
	assert.True(t, strings.HasPrefix(s, "13.4 requests/s (≈ 6.7 concurrent users) within P99 TTFT ≤ 500ms, P99 TPOT ≤ 100ms: 100.0% of requests met the SLO at 13.4 req/s; 90.0% at 14.6 req/s, 9% above (8 runs)"), s)

	c, err := Search(context.Background(), config(Concurrency, 1), threshold(5))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{units.CapacityConc: 5, units.CapacityUsers: 2.5}, c.Metrics())
	assert.Contains(t, c.Statement(), "5 concurrent users (5 requests/s) within P99 TTFT ≤ 500ms")

	var b bytes.Buffer
	require.NoError(t, r.WriteTable(&b))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	assert.Len(t, lines, 1+len(r.Trials), b.String())
	assert.Contains(t, lines[0], "req/s sent")
	assert.Contains(t, b.String(), "FAIL")
	assert.Contains(t, lines[1], "100.0%")
}
