package capacity

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

	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
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

// batching is threshold with users that scale as a batching server's:
// five requests in flight at the capacity, so that about one request in
// flight (the search's first step down from a failing run) passes.
func batching(capacity float64) Probe {
	return func(ctx context.Context, level float64) (Trial, error) {
		t, err := threshold(capacity)(ctx, level)
		t.Users = 5 * level / capacity
		return t, err
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
		// bracketing up from 1 req/s: 1, 2, 4, 8, 16 then bisection, then
		// the two levels of the bracket once more (every case: +2 runs)
		{"rate from below", config(Rate, 1), 14.3, 11},
		// bracketing down from far above
		{"rate from above", config(Rate, 100), 14.3, 10},
		// the capacity right at a doubled level
		{"rate at a bracket level", config(Rate, 1), 8, 10},
		// a slow deployment
		{"rate below 1", config(Rate, 1), 0.3, 10},
		// a fast one, with a start near it (from 1 the budget would not
		// do: TestSearchBudget)
		{"rate high with a start near it", config(Rate, 500), 900, 8},
		// concurrency stops at neighbours: 5 passes, 6 fails
		{"concurrency", config(Concurrency, 1), 5, 8},
		{"concurrency from above", config(Concurrency, 64), 20, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Search(context.Background(), c.cfg, batching(c.capacity))
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
			assert.Equal(t, 2, r.runsAt(r.Pass.Level), "the passing level ran twice")
			assert.Equal(t, 2, r.runsAt(r.Fail.Level), "the failing level ran twice")
			assert.Empty(t, r.Borderline, "100%% against 90%% of 200 requests: apart")
		})
	}
}

// TestSearchAnyCapacity: from a start of 1 req/s, every capacity between
// 0.05 and 200 req/s is found in at most 14 runs, within 10%.
func TestSearchAnyCapacity(t *testing.T) {
	for capacity := 0.05; capacity < 200; capacity *= 1.07 {
		r, err := Search(context.Background(), config(Rate, 1), batching(capacity))
		require.NoError(t, err)
		require.True(t, r.Found, "capacity %.3f: %s", capacity, r.Reason)
		require.LessOrEqual(t, len(r.Trials), 14, "capacity %.3f", capacity)
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
		{"all pass", small, threshold(1000), "every run met the SLO, up to 8 req/s, in 4 runs: raise the start or raise the run budget (capacity.max_runs, --max-runs) (4 runs of at most 4, 0s of the 30m time budget)", 4},
		// 1, 0.5, 0.25, 0.125 all fail without a completed request: no
		// users in flight to find one request in flight from, so halving
		{"all fail", small, errorsOnly, "every run failed the SLO, down to 0.125 req/s", 0},
		// 1, 2, 4 pass, 8 fails: 4 to 8 is not within 10%
		{"bracket too wide", small, threshold(5), "4 req/s passes and 8 req/s fails, 100% apart, after 4 runs", 3},
		// within 10% after 8 runs (1, 2, ..., 16, then bisection), and a
		// budget of 9: the failing level is not repeated
		{"no repeat", budget(config(Rate, 1), 9), threshold(14.3), "within 10%, but the budget ran out before both ran a second time", 7},
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

// errorsOnly is a server whose every request fails.
func errorsOnly(context.Context, float64) (Trial, error) { return Trial{Requests: 100}, nil }

// TestSearchBudget: a capacity too far from the start for the budget is
// reported as a bound, not as the capacity.
func TestSearchBudget(t *testing.T) {
	r, err := Search(context.Background(), config(Rate, 1), threshold(30000))
	require.NoError(t, err)
	assert.False(t, r.Found)
	assert.Len(t, r.Trials, 14)
	assert.Contains(t, r.Reason, "every run met the SLO, up to 8192 req/s, in 14 runs: raise the start or raise the run budget")
}

// budget is cfg with a run budget of runs.
func budget(cfg Config, runs int) Config {
	cfg.Capacity.MaxRuns = runs
	return cfg
}

// TestSearchTimeBudget: no run starts once capacity.max_time has passed,
// and the reason and the statement say which budget ran out, beside the
// run budget.
func TestSearchTimeBudget(t *testing.T) {
	cfg := config(Rate, 1)
	cfg.Capacity.MaxTime = 5 * time.Minute
	clock := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { return clock }
	probe := func(ctx context.Context, level float64) (Trial, error) {
		clock = clock.Add(2 * time.Minute) // every run takes two minutes
		return threshold(14.3)(ctx, level)
	}
	r, err := Search(context.Background(), cfg, probe)
	require.NoError(t, err)
	assert.Len(t, r.Trials, 3, "runs start at 0, 2 and 4 minutes; none at 6")
	assert.True(t, r.OutOfTime)
	assert.Equal(t, 6*time.Minute, r.Elapsed)
	assert.Equal(t, "capacity not found: every run met the SLO, up to 4 req/s, in 3 runs: raise the start or raise the time budget (capacity.max_time, --max-time) (3 runs of at most 14, 6m of the 5m time budget)", r.Statement())
}

// queueless is a deployment too slow for the SLO at any load: every
// request fails it, none waits in the server's queue, and the requests in
// flight follow Little's law with 5 s requests.
func queueless(_ context.Context, level float64) (Trial, error) {
	return Trial{Requests: 50, Good: 0, ReqPerSec: level, Users: 5 * level, HasWaiting: true}, nil
}

// TestSearchOutOfReach: the first failing run, with nothing passed, is
// followed by one at about one request in flight; when that fails too the
// search stops, saying the SLO is out of reach at any load. When it
// passes, the two bracket the capacity.
func TestSearchOutOfReach(t *testing.T) {
	for _, c := range []struct {
		name   string
		cfg    Config
		probe  Probe
		levels []float64
		reason string
	}{
		// 4 req/s with 20 in flight, then 4/20 = 0.2 req/s
		{"rate", config(Rate, 4), queueless, []float64{4, 0.2},
			"even at 0.2 req/s, about one request in flight, with no request waiting in the server's queue, only 0.0% of requests met it, and 0.0% at 4 req/s"},
		// the first run already had at most one request in flight
		{"rate at one user", config(Rate, 0.1), queueless, []float64{0.1},
			"even at 0.1 req/s, about one request in flight, with no request waiting in the server's queue, only 0.0% of requests met it"},
		// a closed loop: one request in flight next
		{"concurrency", config(Concurrency, 8), queueless, []float64{8, 1},
			"even at 1 in flight, with no request waiting in the server's queue, only 0.0% of requests met it, and 0.0% at 8 in flight"},
		// a server that does not say whether requests queued
		{"concurrency 1 fails", config(Concurrency, 4), threshold(0.5), []float64{4, 1},
			"even at 1 in flight, only 90.0% of requests met it, and 90.0% at 4 in flight"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Search(context.Background(), c.cfg, c.probe)
			require.NoError(t, err)
			var levels []float64
			for _, tr := range r.Trials {
				levels = append(levels, tr.Level)
			}
			assert.Equal(t, c.levels, levels)
			assert.True(t, r.OutOfReach)
			assert.False(t, r.Found)
			assert.Empty(t, r.Metrics(), "no capacity, no figure")
			assert.Contains(t, r.Reason, "the SLO (at least 99% of requests each within TTFT ≤ 500ms and TPOT ≤ 100ms) is out of reach at any load: ")
			assert.Contains(t, r.Reason, c.reason)
			assert.Equal(t, "no capacity: "+r.Reason, r.Statement())
		})
	}
	// One request in flight passes: the search brackets between.
	light := func(ctx context.Context, level float64) (Trial, error) {
		if level <= 0.2 {
			return Trial{Requests: 50, Good: 50, ReqPerSec: level, Users: 5 * level, HasWaiting: true}, nil
		}
		return queueless(ctx, level)
	}
	r, err := Search(context.Background(), config(Rate, 4), light)
	require.NoError(t, err)
	assert.False(t, r.OutOfReach)
	assert.True(t, r.Found, r.Reason)
	assert.Equal(t, 0.2, r.Pass.Level)
}

// TestSearchRepeatDisagrees: a repeat of the passing level that fails
// moves the bracket down (the level no longer counts as passing) and the
// search goes on; a repeat of the failing level that passes leaves the
// level failing and the result flagged borderline.
func TestSearchRepeatDisagrees(t *testing.T) {
	// 14.3 req/s passes once, then fails: the capacity is below it.
	runs := map[float64]int{}
	flaky := func(ctx context.Context, level float64) (Trial, error) {
		runs[level]++
		if level > 13 && level < 14.5 && runs[level] > 1 {
			return Trial{Requests: 100, Good: 90, ReqPerSec: level, Users: level / 2}, nil
		}
		return threshold(14.5)(ctx, level)
	}
	r, err := Search(context.Background(), config(Rate, 1), flaky)
	require.NoError(t, err)
	require.True(t, r.Found, r.Reason)
	assert.Less(t, r.Pass.Level, 13.0, "the level that failed its repeat is no capacity")
	assert.Contains(t, r.Borderline, "passed, 1 failed)")

	// 16 req/s fails once, then passes: still failing, borderline.
	runs = map[float64]int{}
	lucky := func(ctx context.Context, level float64) (Trial, error) {
		runs[level]++
		if level == 16 && runs[level] > 1 {
			return Trial{Requests: 100, Good: 100, ReqPerSec: level, Users: level / 2}, nil
		}
		return threshold(15)(ctx, level)
	}
	r, err = Search(context.Background(), config(Rate, 8), lucky)
	require.NoError(t, err)
	require.True(t, r.Found, r.Reason)
	assert.Equal(t, 16.0, r.Fail.Level)
	assert.Contains(t, r.Borderline, "its runs at 16 req/s disagreed (1 passed, 1 failed)")
	assert.Contains(t, r.Statement(), "; borderline: ")
}

// TestGoodputInterval: Wilson's 95% interval, checked against values
// computed by hand (statsmodels' proportion_confint, method wilson).
func TestGoodputInterval(t *testing.T) {
	for _, c := range []struct {
		good, requests int
		low, high      float64
	}{
		{100, 100, 96.30, 100},
		{99, 100, 94.55, 99.82},
		{0, 50, 0, 7.13},
		{45, 90, 39.89, 60.11},
	} {
		g := GoodputOf(c.good, c.requests)
		assert.InDelta(t, c.low, g.Low, 0.01, "%d of %d: low", c.good, c.requests)
		assert.InDelta(t, c.high, g.High, 0.01, "%d of %d: high", c.good, c.requests)
	}
	assert.Equal(t, Goodput{High: 100}, GoodputOf(0, 0), "no request: anything")
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
		{"time", func(c *Config) { c.Capacity.MaxTime = 0 }, "capacity.max_time"},
		{"run length", func(c *Config) { c.Capacity.MaxRun = -time.Second }, "capacity.max_run"},
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
	assert.Equal(t, "13.4 requests/s (≈ 6.7 concurrent users) with at least 99% of requests each within TTFT ≤ 500ms and TPOT ≤ 100ms: 100.0% (98.1–100.0%) of 200 requests met the SLO at 13.4 req/s; 90.0% (85.1–93.4%) of 200 at 14.6 req/s, 9% above (10 runs of at most 14, 0s of the 30m time budget)", s)

	c, err := Search(context.Background(), config(Concurrency, 1), threshold(5))
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{units.CapacityConc: 5, units.CapacityUsers: 2.5}, c.Metrics())
	assert.Contains(t, c.Statement(), "5 concurrent users (5 requests/s) with at least 99% of requests each within TTFT ≤ 500ms")

	var b bytes.Buffer
	require.NoError(t, r.WriteTable(&b))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	assert.Len(t, lines, 1+len(r.Trials), b.String())
	assert.Contains(t, lines[0], "req/s sent")
	assert.Contains(t, b.String(), "FAIL")
	assert.Contains(t, lines[1], "100.0%")
}

// falling is a deployment that completes at most pace req/s and meets the
// SLO up to capacity: above pace the overload rule stops its runs with
// every measured request within the SLO (the server fell behind the rate,
// not the SLO), with about 25 requests in flight; between capacity and
// pace a tenth of its requests miss.
func falling(capacity, pace float64) Probe {
	return func(ctx context.Context, level float64) (Trial, error) {
		t, err := batching(capacity)(ctx, level)
		if level > pace {
			t.Good, t.Stopped, t.Pace, t.Users, t.ReqPerSec = t.Requests, "OVERLOADED", pace, 25, pace
		}
		return t, err
	}
}

// TestSearchBelowPace: an overloaded first run whose requests met the SLO
// is followed by a run just under its pace (then, if that fails, by one at
// about one request in flight), and the search ends in fewer runs.
func TestSearchBelowPace(t *testing.T) {
	type paceCase struct {
		name        string
		probe       Probe
		start       float64
		first2      []float64 // the first two levels run
		most        int       // the most runs it may take
		withoutPace int       // the runs the search took before
	}
	for _, c := range []paceCase{
		// pace 3.6 req/s, capacity 3.4: 4 fails, 3.6/1.1 = 3.27 passes
		{"pace above the capacity", falling(3.4, 3.6), 4, []float64{4, 3.27}, 6, 10},
		// the capacity far under the pace: 8/1.1 = 7.27 fails, then one
		// request in flight (7.27 over its 18 users: 0.4); as many runs
		// as without the pace
		{"capacity far under the pace", falling(2, 8), 16, []float64{16, 7.27}, 10, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Search(context.Background(), config(Rate, c.start), c.probe)
			require.NoError(t, err)
			require.True(t, r.Found, r.Reason)
			var levels []float64
			for _, tr := range r.Trials {
				levels = append(levels, tr.Level)
			}
			assert.Equal(t, c.first2, levels[:2], "levels %v", levels)
			assert.LessOrEqual(t, len(r.Trials), c.most, "levels %v", levels)
			assert.Greater(t, r.Fail.Level, r.Pass.Level)
			assert.LessOrEqual(t, r.Fail.Level, 1.1*r.Pass.Level+1e-9)
			// The same deployment, searched without the pace (as before):
			// more runs, and the same bracket within the tolerance.
			plain := func(ctx context.Context, level float64) (Trial, error) {
				t, err := c.probe(ctx, level)
				t.Pace = 0
				return t, err
			}
			before, err := Search(context.Background(), config(Rate, c.start), plain)
			require.NoError(t, err)
			require.True(t, before.Found, before.Reason)
			assert.Equal(t, c.withoutPace, len(before.Trials), "runs without the pace")
			assert.InEpsilon(t, before.Pass.Level, r.Pass.Level, 0.1)
		})
	}
	// Requests that missed the SLO before the stop: one request in flight
	// first, as after any first failure (whether any load meets the SLO).
	missing := func(ctx context.Context, level float64) (Trial, error) {
		t, err := falling(3.4, 3.6)(ctx, level)
		if level > 3.6 {
			t.Good = t.Requests / 2
		}
		return t, err
	}
	r, err := Search(context.Background(), config(Rate, 4), missing)
	require.NoError(t, err)
	assert.Equal(t, 0.16, r.Trials[1].Level, "4 req/s over 25 users")
}
