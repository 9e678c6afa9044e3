package history

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
)

// synthUnits are the units every point of a synthetic store reports, with
// their direction: the suite's latency and throughput units (each a
// series the check tests) and err-% (0 throughout: constant, not tested).
var synthUnits = []struct {
	name, better string
	base         float64
}{
	{"ttft-p50-ns", "lower", 40e6}, {"ttft-p99-ns", "lower", 70e6}, {"tpot-p50-ns", "lower", 20e6},
	{"tpot-p99-ns", "lower", 24e6}, {"itl-p99-ns", "lower", 30e6}, {"e2el-p99-ns", "lower", 3e9},
	{"tok/s", "higher", 50}, {"req/s", "higher", 2}, {"goodput-req/s", "higher", 1.8}, {"err-%", "lower", 0},
}

// suitePoints are the run names of every point of the suite at quick size:
// every built-in profile × every built-in scenario's points.
func suitePoints(tb testing.TB) []string {
	tb.Helper()
	var out []string
	for _, p := range profile.Names() {
		for _, s := range scenario.Names() {
			sc, err := scenario.Builtin(s)
			require.NoError(tb, err)
			for _, pt := range sc.Points(scenario.Quick) {
				out = append(out, benchname.Name{Profile: p, Scenario: s, Point: pt.Key}.String())
			}
		}
	}
	return out
}

// synthStore writes a store of n runs of the whole suite (every point of
// suitePoints, every synthUnits unit, reps repetitions a run) to dir and
// returns how many series the check tests. A run's value is the unit's
// base × (1 + the run's drift for that point, N(0, 2%)) × (1 + the
// repetition's noise, N(0, 2.5%)); from run stepAt on (stepAt < n), every
// unit of every point of the basic profile is 5% worse.
func synthStore(tb testing.TB, dir string, n, reps, stepAt int) int {
	tb.Helper()
	points := suitePoints(tb)
	s, err := Init(dir)
	require.NoError(tb, err)
	rng := rand.New(rand.NewPCG(20261205, 300))
	src := filepath.Join(tb.TempDir(), "bench.txt")
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for r := range n {
		var b strings.Builder
		for _, u := range synthUnits {
			fmt.Fprintf(&b, "Unit %s better=%s\n", u.name, u.better)
		}
		for _, k := range []string{"backend: sim", "gpu: sim:rtx4090-seed", "model: Qwen/Qwen3-0.6B", "size: quick", "image: in-process", "vllm-version: 0.11.0-sim"} {
			b.WriteString(k + "\n")
		}
		for _, p := range points {
			drift := make([]float64, len(synthUnits))
			for i := range drift {
				drift[i] = 1 + 0.02*rng.NormFloat64()
			}
			step := 1.0
			if r >= stepAt && strings.HasPrefix(p, "profile=basic/") {
				step = 1.05
			}
			for range reps {
				fmt.Fprintf(&b, "BenchmarkPerf/%s-2 1 1000 ns/op", p)
				for i, u := range synthUnits {
					v := u.base * drift[i] * (1 + 0.025*rng.NormFloat64())
					switch {
					case u.better == "lower":
						v *= step
					default:
						v /= step
					}
					fmt.Fprintf(&b, " %g %s", v, u.name)
				}
				b.WriteString("\n")
			}
		}
		require.NoError(tb, os.WriteFile(src, []byte(b.String()), 0o644))
		_, err := s.Add(src, AddOptions{Commit: fmt.Sprintf("%07x", r+1), Date: start.Add(time.Duration(r) * 24 * time.Hour)})
		require.NoError(tb, err)
	}
	return len(points) * (len(synthUnits) - 1)
}

// checkStore is `vllmperf history check` with its defaults on the store
// at dir: open, read every run, group, check.
func checkStore(tb testing.TB, dir string) *CheckReport {
	tb.Helper()
	return checkStoreWith(tb, dir, DefaultCheck)
}

// checkStoreWith is checkStore with the options o.
func checkStoreWith(tb testing.TB, dir string, o CheckOptions) *CheckReport {
	tb.Helper()
	s, err := Open(dir)
	require.NoError(tb, err)
	runs, err := s.Runs()
	require.NoError(tb, err)
	khs, err := Group(runs, Filter{}, nil)
	require.NoError(tb, err)
	rep, err := Check(khs, o)
	require.NoError(tb, err)
	return rep
}

// TestSynthStore checks the synthetic store on a short one: every series
// of the suite tested, and the basic profile's step found.
func TestSynthStore(t *testing.T) {
	testphase.Measured(t)
	if raceEnabled {
		t.Skip("a few seconds, far more under the race detector: make test runs it without -race, with TestHistoryQuality")
	}
	dir := filepath.Join(t.TempDir(), "store")
	series := synthStore(t, dir, 16, 10, 8)
	rep := checkStore(t, dir)
	profiles := 0
	for _, k := range rep.Keys {
		profiles += k.Profiles
	}
	require.Equal(t, series, rep.Tested-profiles, "every benchmark's series tested")
	require.Positive(t, profiles, "and the profiles' series")
	outside := 0
	for _, c := range rep.Changes {
		if c.Profile != "basic" {
			outside++
		}
	}
	t.Logf("%d series tested, %d changes, %d outside the stepped profile", rep.Tested, len(rep.Changes), outside)
	require.Greater(t, len(rep.Changes)-outside, len(rep.Changes)*9/10, "most changes in the stepped profile")
}

// BenchmarkCheckLargeStore times `history check` on a 300-run store of
// the whole suite (docs/history.md, Limits):
//
//	go test -run '^$' -bench CheckLargeStore -benchtime 1x ./internal/results/history/
//
// unchanged: no change in 300 runs; step: every series of the basic profile
// (a fifth of the suite) 5% worse from run 201. The step store is also
// checked with the benchmarks' series only (the check before profile
// series), for what they cost.
func BenchmarkCheckLargeStore(b *testing.B) {
	benchmarksOnly := DefaultCheck
	benchmarksOnly.benchmarksOnly = true
	for _, c := range []struct {
		name   string
		stepAt int
		rules  CheckOptions
	}{{"unchanged", 300, DefaultCheck}, {"step", 200, DefaultCheck}, {"step/benchmarks-only", 200, benchmarksOnly}} {
		b.Run(c.name, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "store")
			series := synthStore(b, dir, 300, 10, c.stepAt)
			b.ResetTimer()
			var rep *CheckReport
			for range b.N {
				rep = checkStoreWith(b, dir, c.rules)
			}
			b.StopTimer()
			b.ReportMetric(float64(rep.Tested), "series")
			b.ReportMetric(float64(len(rep.Changes)), "changes")
			b.ReportMetric(float64(rep.permutations), "permutations")
			profiles := 0
			for _, k := range rep.Keys {
				profiles += k.Profiles
			}
			b.ReportMetric(float64(profiles), "profile-series")
			if rep.Tested-profiles != series {
				b.Fatalf("tested %d series of benchmarks, want %d", rep.Tested-profiles, series)
			}
		})
	}
}
