package perf_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// noiseFree turns the simulator's run-to-run noise off (vllm-sim's
// --sim-jitter 0): the assertions compare profiles whose differences on the
// default preset can be a few percent, which noise would make a coin flip.
// Benchmarks keep the noise, as real servers have it.
var noiseFree = []string{"--sim-jitter", "0"}

// runs collects the runs of TestPerf by profile and run name.
type runs struct {
	mu sync.Mutex
	m  map[string]map[string]*suite.Run
}

func (r *runs) add(profile string, run *suite.Run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m[profile] == nil {
		r.m[profile] = map[string]*suite.Run{}
	}
	r.m[profile][run.Name] = run
}

// closed names a closed-loop point below its profile, as the suite does.
func closed(scenario, class string, concurrency int) string {
	return benchname.Name{Scenario: scenario, Point: benchname.ClosedPoint(class, concurrency)}.Sub()
}

// metric returns a unit of a run, failing the test when it is missing.
func (r *runs) metric(t *testing.T, profile, name, unit string) float64 {
	t.Helper()
	run := r.m[profile][benchname.ProfileElem(profile)+"/"+name]
	require.NotNil(t, run, "no run %s on %s", name, profile)
	v, ok := run.Metrics[unit]
	require.True(t, ok, "%s on %s reported no %s", name, profile, unit)
	return v
}

// requireChecks asserts every check of a run passed (NOT_AVAILABLE fails
// in strict mode, and is never a pass).
func requireChecks(t *testing.T, r *suite.Run) {
	t.Helper()
	for _, c := range r.Checks {
		assert.False(t, c.Failed(r.Strict), "%s: %s", r.Name, c)
	}
}

// TestPerf runs every profile × scenario point (quick size unless
// VLLMPERF_SIZE says full) with every check live, then asserts that the
// profiles differ where their flags say they should. Profiles of the
// container and external backends run one after another: their servers
// share the GPUs or the deployment (suite.Shares). In-process simulators
// share only this machine's cores, which timed checks (ttft_gap) feel:
// five loads at once under -race on 2 cores pushed a client's mean TTFT
// 101 ms above its server's (limit 100 ms); they run go test's -parallel
// at a time (GOMAXPROCS: two here), without -race. The timed comparisons
// are measured again, serially, on the best of three runs.
//
// It runs in real time for minutes, so make test runs it in the alone
// phase, without -race, in a lane of its own beside the other alone tests
// (the suite's code runs under -race in its packages' tests and in
// TestPerfChecksFail).
func TestPerf(t *testing.T) {
	testphase.Alone(t)
	testphase.Lane(t, testphase.LaneSuite)
	s := newSuite(t, true, noiseFree...)
	all := &runs{m: map[string]map[string]*suite.Run{}}
	t.Run("profiles", func(t *testing.T) {
		for _, name := range s.Config().Profiles {
			t.Run(name, func(t *testing.T) {
				if !s.Shares() {
					t.Parallel()
				}
				runProfile(t, s, name, all)
			})
		}
	})
	if !s.StartsServers() {
		t.Logf("profile differences not compared: the %s backend measures one deployment with its own flags (%s)", s.Config().Backend, strings.Join(s.Config().Profiles, ""))
		return
	}
	if t.Failed() || !hasProfiles(s, "basic", "high-throughput", "low-latency", "memory-saving", "speculative") {
		return
	}
	t.Run("differences", func(t *testing.T) { profilesDiffer(t, all) })
	t.Run("timed differences", func(t *testing.T) { timedDifferences(t, s) })
}

// runProfile starts a profile's server and runs every scenario point on
// it with its checks. A point the server's context cannot hold is an
// error with the numbers, and the others still run.
func runProfile(t *testing.T, s *suite.Suite, name string, all *runs) {
	ctx := context.Background()
	ss := start(t, s, name)
	defer closeSession(t, ss)
	requireChecks(t, ss.Startup)
	all.add(name, ss.Startup)
	for _, scName := range s.Config().Scenarios {
		pts, err := ss.Points(scName)
		require.NoError(t, err)
		for _, pt := range pts {
			r, err := ss.Run(ctx, pt)
			var ce *pipeline.ContextError
			if errors.As(err, &ce) {
				t.Error(err)
				continue
			}
			require.NoError(t, err)
			requireChecks(t, r)
			all.add(name, r)
		}
	}
}

func hasProfiles(s *suite.Suite, names ...string) bool {
	have := strings.Join(s.Config().Profiles, ",")
	for _, n := range names {
		if !strings.Contains(have, n) {
			return false
		}
	}
	return true
}

// profilesDiffer: what each profile's flags promise, where contention on
// the machine cannot move the figure (counts, caps, ratios of blocks).
func profilesDiffer(t *testing.T, all *runs) {
	// Prefix caching is on by default in V1, so basic hits the cache too.
	for _, p := range []string{"basic", "high-throughput", "memory-saving"} {
		hit := all.metric(t, p, closed("prefix-reuse", "", 8), units.PrefixHitPct)
		assert.Greater(t, hit, 50.0, "%s: prefix-reuse hit rate", p)
	}
	// At concurrency 32, max-num-seqs 64 runs all 32 at once; max-num-seqs
	// 16 runs 16 and its waiting queue shows why.
	sweep32 := closed("concurrency-sweep", "", 32)
	assert.Equal(t, 32.0, all.metric(t, "high-throughput", sweep32, units.RunningPeak))
	assert.Equal(t, 16.0, all.metric(t, "low-latency", sweep32, units.RunningPeak))
	assert.GreaterOrEqual(t, all.metric(t, "low-latency", sweep32, units.WaitingPeak), 8.0,
		"low-latency at conc 32 should queue the 16 requests above max-num-seqs")
	// FP8 KV cache: about twice the blocks per GiB of cache.
	ratio := all.metric(t, "memory-saving", benchname.ScenarioElem(benchname.StartupScenario), units.BlocksPerGiB) / all.metric(t, "basic", benchname.ScenarioElem(benchname.StartupScenario), units.BlocksPerGiB)
	assert.InDelta(t, 2.0, ratio, 0.05, "memory-saving / basic KV blocks per GiB")
	// Speculative decoding: several tokens per chunk, and an acceptance rate.
	assert.Greater(t, all.metric(t, "speculative", closed("ttft-tpot", "medium", 1), units.TokPerChunk), 1.5)
	acc := all.metric(t, "speculative", closed("ttft-tpot", "medium", 1), units.SpecAccept)
	assert.Greater(t, acc, 0.0)
	assert.LessOrEqual(t, acc, 100.0)
	assert.InDelta(t, 1.0, all.metric(t, "basic", closed("ttft-tpot", "medium", 1), units.TokPerChunk), 0.05, "basic: one token per chunk")
}

// timedReps is how many times each timed comparison runs each side,
// alternating, one server at a time. The simulator runs noise-free here,
// so a run's figures differ from the true ones only by what contention
// for the CPU adds (go test runs other packages beside this one on two
// cores): delay, never speed. The best of the runs is therefore the
// least disturbed, and the sides are compared on it.
const timedReps = 3

// timedDifferences: what the profiles promise in time, measured serially,
// alternating the two sides, each on a server of its own, compared on the
// best of timedReps runs (the lowest latency, the highest throughput).
func timedDifferences(t *testing.T, s *suite.Suite) {
	// At concurrency 32, max-num-seqs 64 out-produces max-num-seqs 16. On
	// the default preset (the seed's setup, saturating near 16-20
	// streams) the gain is small: about 6% noise-free.
	ht, ll := timedPair(t, s, "concurrency-sweep", "conc=32", "high-throughput", "low-latency", units.TokPerSec, slices.Max)
	assert.Greater(t, ht, ll, "conc 32: high-throughput %.0f tok/s vs low-latency %.0f (best of %d)", ht, ll, timedReps)
	// Chunked prefill with a 512-token budget keeps a long prompt's
	// prefill from stalling the others' decode: the short requests' P99
	// ITL is lower (38.8 vs 50.4 ms noise-free). (Their P99 TTFT is not:
	// vLLM V1 schedules the running partial prefill first, so a 1542-token
	// prompt holds the whole 512-token budget for 4 steps while new short
	// prompts wait; docs/suite.md.)
	itlLL, itlBasic := timedPair(t, s, "long-prefill-mix", "conc=16", "low-latency", "basic", "short-"+units.ITLP99, slices.Min)
	assert.Less(t, itlLL, itlBasic, "short-request P99 ITL: low-latency %.1f ms vs basic %.1f ms (best of %d)", itlLL/1e6, itlBasic/1e6, timedReps)
}

// timedPair runs one point on two profiles timedReps times each,
// alternating, each run on a server started for it alone, and returns
// the best (by best: slices.Min or slices.Max) of unit on each side.
func timedPair(t *testing.T, s *suite.Suite, scenarioName, point, a, b, unit string, best func([]float64) float64) (float64, float64) {
	t.Helper()
	ctx := context.Background()
	var got [2][]float64
	for range timedReps {
		for side, name := range []string{a, b} {
			ss := start(t, s, name)
			pt := pointNamed(t, ss, scenarioName, point)
			r, err := ss.Run(ctx, pt)
			closeSession(t, ss)
			require.NoError(t, err)
			v, ok := r.Metrics[unit]
			require.True(t, ok, "%s reported no %s", r.Name, unit)
			got[side] = append(got[side], v)
		}
	}
	t.Logf("%s/%s %s: %s %v, %s %v", scenarioName, point, unit, a, got[0], b, got[1])
	return best(got[0]), best(got[1])
}

// pointNamed is a scenario's point at the suite's size, by key.
func pointNamed(t *testing.T, ss *suite.Session, scenarioName, key string) scenario.Point {
	t.Helper()
	pts, err := ss.Points(scenarioName)
	require.NoError(t, err)
	for _, p := range pts {
		if p.Key == key {
			return p
		}
	}
	t.Fatalf("scenario %s has no point %s", scenarioName, key)
	return scenario.Point{}
}

// TestPerfPrefixCachingOff: the same prefix-reuse scenario with caching
// turned off hits the cache about never, and the check sees it is off.
// The variant runs as profile basic-no-prefix-caching, so that its runs
// are named apart from basic's in a results folder TestPerf shares.
func TestPerfPrefixCachingOff(t *testing.T) {
	cfg := envConfig(t, true)
	if !cfg.StartsServers() { // before the suite opens the results folder
		t.Skipf("the %s backend cannot restart the deployment with --no-enable-prefix-caching: its flags are its own", cfg.Backend)
	}
	s := newSuiteFrom(t, cfg, noiseFree...)
	p, err := profile.Builtin("basic")
	require.NoError(t, err)
	p = p.WithExtraArgs("--no-enable-prefix-caching") // a vLLM flag: real servers take it too
	p.Name = "basic-no-prefix-caching"
	ctx := context.Background()
	ss, err := s.StartProfile(ctx, p)
	skipWithoutDocker(t, err)
	require.NoError(t, err)
	defer closeSession(t, ss)
	pts, err := ss.Points("prefix-reuse")
	require.NoError(t, err)
	r, err := ss.Run(ctx, pts[0])
	require.NoError(t, err)
	requireChecks(t, r)
	hit, ok := r.Metrics[units.PrefixHitPct]
	if ok { // vLLM counts no queries with caching off: no rate at all is fine too
		assert.Less(t, hit, 1.0)
	}
	assert.Contains(t, checkNamed(t, r, "prefix_hit").Detail, "with caching off")
}

func checkNamed(t *testing.T, r *suite.Run, name string) check.Result {
	t.Helper()
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("%s has no check %s", r.Name, name)
	return check.Result{}
}

// TestPerfChecksFail proves each server-side check fails when it should,
// with a simulator made to misbehave.
func TestPerfChecksFail(t *testing.T) {
	testphase.Fault(t)
	cfg, err := suite.FromEnv(true)
	require.NoError(t, err)
	if cfg.Backend == server.KindExternal {
		t.Skipf("the faults are the simulator's, set by its flags: the %s backend reaches a deployment with its own", cfg.Backend)
	}
	for _, tc := range []struct {
		name      string
		simArgs   []string // faults and settings of the simulator
		scenario  string
		point     string // run only this point ("" all)
		maxTokens int    // replaces the point's max_tokens (0 keeps it)
		check     string
		status    check.Status
		detail    string
	}{
		// The server reports one completion token more than it generated:
		// its counters no longer match the usage the client got.
		{"usage skew", []string{"--sim-fault-usage-skew", "1"}, "ttft-tpot", "", 0, "reconcile/generation_tokens", check.Fail, "but the client received"},
		// The server restarts mid-run: every counter starts again at 0
		// (and may have grown past its old value by the next scrape).
		{"counter reset", []string{"--sim-fault-restart-after", "2"}, "ttft-tpot", "", 0, "reconcile/generation_tokens", check.Invalid, "the server restarted"},
		// A metric the server does not expose is named, never passed.
		{"missing metric", []string{"--sim-fault-drop-metric", "vllm:prefix_cache_hits_total"}, "prefix-reuse", "", 0, "prefix_hit", check.NotAvailable, "prefix_cache_hits_total"},
		// A KV cache (321 blocks) that 32 requests fill to the brim.
		{"kv full", []string{"--gpu-memory-utilization", "0.115"}, "concurrency-sweep", "conc=32", 0, "kv_peak", check.Fail, "(ceiling 90%"},
		// The same cache with outputs of 64 tokens (twice the point's): the
		// running requests outgrow it and are preempted (9 times on the
		// default preset).
		{"preempted", []string{"--gpu-memory-utilization", "0.115"}, "concurrency-sweep", "conc=32", 64, "preemptions", check.Fail, "the KV cache ran out"},
		// max-num-seqs below the concurrency the profile claims: no batching.
		{"no batching", []string{"--max-num-seqs", "2"}, "concurrency-sweep", "conc=8", 0, "batching", check.Fail, "not batched together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := cfg
			c.SimArgs = append(append([]string{}, cfg.SimArgs...), tc.simArgs...)
			c.Profiles, c.ResultsDir = []string{"basic"}, ""
			s, err := suite.New(c)
			require.NoError(t, err)
			ctx := context.Background()
			ss := start(t, s, "basic")
			defer closeSession(t, ss)
			if !ss.Server.Describe().Simulator {
				t.Skip("the faults are the simulator's: run with the sim backend or the simulator image")
			}
			pts, err := ss.Points(tc.scenario)
			require.NoError(t, err)
			var found []check.Result
			for _, pt := range pts {
				if tc.point != "" && pt.Key != tc.point {
					continue
				}
				if tc.maxTokens > 0 {
					pt.Classes = slices.Clone(pt.Classes)
					for i := range pt.Classes {
						pt.Classes[i].Config.MaxTokens = tc.maxTokens
					}
				}
				r, err := ss.Run(ctx, pt)
				require.NoError(t, err)
				for _, ch := range r.Checks {
					if ch.Name == tc.check && ch.Status == tc.status {
						found = append(found, ch)
					}
				}
			}
			require.NotEmpty(t, found, "no %s check came out %s", tc.check, tc.status)
			assert.Contains(t, found[0].Detail, tc.detail)
			assert.True(t, found[0].Failed(true), "a %s check must fail the run", found[0].Status)
		})
	}
}
