package history

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/run/check"
	"github.com/vllmperf/vllmperf/internal/vocab/vllmdate"
)

// simConfig is the suite's configuration lines for the simulator.
func simConfig() map[string]string {
	return map[string]string{"backend": "sim", "gpu": "sim:rtx4090-seed", "model": "Qwen/Qwen3-0.6B", "vllm-version": "0.11.0-sim", "image": "in-process", "size": "quick"}
}

// unitLines are the suite's Unit lines for the units the tests use.
const unitLines = "Unit tpot-p50-ns better=lower\nUnit tok/s better=higher\nUnit err-% better=lower\n"

// benchText writes a bench file: the Unit lines, cfg, then one line per
// benchmark and repetition (values[bench][unit][rep]).
func benchText(cfg map[string]string, values map[string]map[string][]float64) string {
	var b strings.Builder
	b.WriteString(unitLines)
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, cfg[k])
	}
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		units := make([]string, 0, len(values[n]))
		reps := 0
		for u, vs := range values[n] {
			units = append(units, u)
			reps = max(reps, len(vs))
		}
		sort.Strings(units)
		for r := range reps {
			fmt.Fprintf(&b, "BenchmarkPerf/%s-2 1 1000 ns/op", n)
			for _, u := range units {
				fmt.Fprintf(&b, " %g %s", values[n][u][r], u)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// resultsDir writes a results folder: bench.txt and, when checks is not
// nil, a summary.json with one run carrying them, dated date.
func resultsDir(t *testing.T, bench string, checks []check.Result, date time.Time) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, BenchFile), []byte(bench), 0o644))
	if checks != nil {
		res, _ := json.Marshal(map[string]any{"date": date.In(time.Local).Format(vllmdate.Layout)})
		sum := results.Summary{Config: map[string]map[string]string{"basic": simConfig()},
			Runs: []results.Run{{Name: "profile=basic/scenario=ttft-tpot/prompt=short/conc=1", Profile: "basic", Result: res, Checks: checks}}}
		data, err := json.Marshal(sum)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, results.SummaryFile), data, 0o644))
	}
	return dir
}

// step describes a synthetic series: level, relative noise, and a
// relative step from run At (1-based; 0 for none).
type step struct {
	level, noise, size float64
	at                 int
}

// syntheticStore adds n runs to a new store: for every benchmark of
// series, each unit's values drawn around its level with its step; cfgAt
// may change a run's configuration (1-based run). Runs are an hour apart.
func syntheticStore(t *testing.T, n, reps int, series map[string]map[string]step, cfgAt func(run int, cfg map[string]string), notes map[int][]string) *Store {
	t.Helper()
	s, err := Init(filepath.Join(t.TempDir(), "store"))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(42, 42))
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for run := 1; run <= n; run++ {
		values := map[string]map[string][]float64{}
		// Sorted: the same values for the same series on every run of
		// the test (a map's order is random).
		for _, b := range slices.Sorted(maps.Keys(series)) {
			units := series[b]
			values[b] = map[string][]float64{}
			for _, u := range slices.Sorted(maps.Keys(units)) {
				st := units[u]
				for range reps {
					v := st.level * (1 + st.noise*rng.NormFloat64())
					if st.at > 0 && run >= st.at {
						v *= 1 + st.size
					}
					values[b][u] = append(values[b][u], v)
				}
			}
		}
		cfg := simConfig()
		if cfgAt != nil {
			cfgAt(run, cfg)
		}
		dir := resultsDir(t, benchText(cfg, values), nil, time.Time{})
		_, err := s.Add(dir, AddOptions{Commit: fmt.Sprintf("%040x", run), Date: start.Add(time.Duration(run) * time.Hour), Notes: notes[run]})
		require.NoError(t, err)
	}
	return s
}

// grouped reads the store and groups it without a filter.
func grouped(t *testing.T, s *Store) []*KeyHistory {
	t.Helper()
	runs, err := s.Runs()
	require.NoError(t, err)
	khs, err := Group(runs, Filter{}, nil)
	require.NoError(t, err)
	return khs
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }

func testDate(i int) time.Time { return time.Date(2026, 12, 1, i, 0, 0, 0, time.UTC) }
