// The suite: wiring only (the logic lives in internal/orchestrate/suite).
// Every built-in profile is started through the backend VLLMPERF_BACKEND
// selects (the embedded simulator by default; container for a vLLM image on
// GPUs, or VLLMPERF_IMAGE=sim for the simulator image; external for
// VLLMPERF_TARGET) and every scenario of scenarios/workloads/ runs on it.
//
//	go test -run '^$' -bench Perf -benchtime 1x -count 6 . | tee new.txt     # full size
//	go test -short -run '^$' -bench Perf -benchtime 1x .                     # quick size
//	go test -run Perf .                                                      # the assertions, quick size
//	VLLMPERF_BACKEND=container go test -run '^$' -bench 'Perf/profile=high-throughput' -benchtime 1x .
//
// The output format (names, units, config lines, what b.N and ns/op mean)
// is docs/bench-format.md; the environment variables are package suite's.
package perf_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// newSuite reads the suite's configuration from the environment; simArgs
// come before VLLMPERF_SIM_ARGS (which can override them).
func newSuite(tb testing.TB, short bool, simArgs ...string) *suite.Suite {
	tb.Helper()
	return newSuiteFrom(tb, envConfig(tb, short), simArgs...)
}

// envConfig is the suite's configuration from the environment.
func envConfig(tb testing.TB, short bool) suite.Config {
	tb.Helper()
	cfg, err := suite.FromEnv(short)
	if err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// newSuiteFrom opens a suite with cfg (and its results folder, shared by
// the suites of this process).
func newSuiteFrom(tb testing.TB, cfg suite.Config, simArgs ...string) *suite.Suite {
	tb.Helper()
	cfg.SimArgs = append(simArgs, cfg.SimArgs...)
	s, err := suite.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Error(err)
		}
	})
	return s
}

// start starts a profile's session; the container backend without a
// Docker engine skips outside CI and fails in CI.
func start(tb testing.TB, s *suite.Suite, name string) *suite.Session {
	tb.Helper()
	ss, err := s.Start(context.Background(), name)
	skipWithoutDocker(tb, err)
	if err != nil {
		tb.Fatal(err)
	}
	return ss
}

// skipWithoutDocker skips (outside CI) or fails (CI=true) when err says
// the container backend found no Docker engine.
func skipWithoutDocker(tb testing.TB, err error) {
	tb.Helper()
	if !errors.Is(err, server.ErrNoDocker) {
		return
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("the container backend needs Docker, required in CI: %v", err)
	}
	tb.Skipf("the container backend needs a Docker engine: %v", err)
}

// closeSession stops a session's server, reporting a failure to stop.
func closeSession(tb testing.TB, ss *suite.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ss.Close(ctx); err != nil {
		tb.Errorf("stop %s: %v", ss.Profile.Name, err)
	}
}

// BenchmarkPerf runs every profile × scenario point and reports the
// figures of docs/bench-format.md through b.ReportMetric.
func BenchmarkPerf(b *testing.B) {
	s := newSuite(b, testing.Short())
	fmt.Println(strings.Join(s.UnitLines(), "\n"))
	for _, name := range s.Config().Profiles {
		b.Run(benchname.ProfileElem(name), func(b *testing.B) { benchProfile(b, s, name) })
	}
}

func benchProfile(b *testing.B, s *suite.Suite, name string) {
	ctx := context.Background()
	ss := start(b, s, name)
	defer func() { closeSession(b, ss) }()
	printConfig(ss.ConfigLines, false)
	fresh := true // the session just started: its startup run is unreported
	b.Run(benchname.ScenarioElem(benchname.StartupScenario), func(b *testing.B) {
		var runs []*suite.Run
		for range b.N {
			if !fresh { // a repetition measures a start of its own
				closeSession(b, ss)
				ss = start(b, s, name)
			}
			fresh = false
			runs = append(runs, ss.Startup)
		}
		report(b, runs)
		// ns/op of the startup point is the server's start, not the
		// timer's (the start happens before the loop, for every profile).
		b.ReportMetric(runs[len(runs)-1].Metrics[units.Ready], "ns/op")
	})
	// The points run on the last start: its own line (the startup
	// point's repetitions, each a start, carry the first's, as the gate
	// counted them before it read the line). Printed here, between
	// benchmarks: a line printed within one would split its result line.
	printConfig(ss.StartLines(), false)
	for _, scName := range s.Config().Scenarios {
		sc, err := ss.Scenario(scName)
		if err != nil {
			b.Fatal(err)
		}
		if sc.Capacity != nil {
			b.Run(benchname.Name{Scenario: scName, Point: benchname.Capacity}.Sub(), func(b *testing.B) { benchCapacity(b, ss, scName) })
			continue
		}
		lines := sc.ConfigLines() // the scenario's data sets, for the gate
		printConfig(lines, false)
		latest := map[string]*suite.Run{}
		var order []string
		for _, pt := range sc.Points(s.Config().Size) {
			b.Run(benchname.Name{Scenario: scName, Point: pt.Key}.Sub(), func(b *testing.B) {
				var runs []*suite.Run
				b.ResetTimer()
				for range b.N {
					r, err := ss.Run(ctx, pt)
					var ce *pipeline.ContextError
					if errors.As(err, &ce) {
						b.Error(err) // this point cannot run here; the others still do
						return
					}
					if err != nil {
						b.Fatal(err)
					}
					runs = append(runs, r)
				}
				b.StopTimer()
				report(b, runs)
				if _, seen := latest[pt.Key]; !seen {
					order = append(order, pt.Key)
				}
				latest[pt.Key] = runs[len(runs)-1]
			})
		}
		if sc.Knee {
			b.Run(benchname.Name{Scenario: scName, Point: benchname.Knee}.Sub(), func(b *testing.B) {
				var runs []*suite.Run
				for _, k := range order {
					runs = append(runs, latest[k])
				}
				k, m := ss.Knee(scName, runs)
				for _, line := range k.Explanation {
					b.Log(line)
				}
				for unit, v := range m {
					b.ReportMetric(v, unit)
				}
			})
		}
		printConfig(lines, true)
	}
}

// printConfig prints benchfmt configuration lines, or clears them (an
// empty value deletes a key) so they end with the scenario.
func printConfig(lines [][2]string, clear bool) {
	for _, kv := range lines {
		if clear {
			fmt.Printf("%s:\n", kv[0])
			continue
		}
		fmt.Printf("%s: %s\n", kv[0], kv[1])
	}
}

// benchCapacity runs a capacity search b.N times (once in practice) and
// reports the mean of its units; ns/op is the search's wall time. A
// search that finds no capacity reports none and logs why.
func benchCapacity(b *testing.B, ss *suite.Session, scName string) {
	var ms []map[string]float64
	for range b.N {
		r, m, err := ss.Capacity(context.Background(), scName)
		if err != nil {
			b.Fatal(err)
		}
		b.Log(r.Statement())
		ms = append(ms, m)
	}
	reportMeans(b, ms)
}

// report reports the mean of each unit over the runs of one benchmark
// (b.N of them; one in practice) and fails the benchmark for every check
// that failed, one check line each (verdict.Check.Line: the gate reads them back from the
// `--- FAIL:` block; go test then prints no result line for the run, and
// exits 1 after the other benchmarks ran and the results folder is
// written).
func report(b *testing.B, runs []*suite.Run) {
	var ms []map[string]float64
	for _, r := range runs {
		ms = append(ms, r.Metrics)
		for _, f := range r.Failures() {
			b.Error(f.Line())
		}
		for _, w := range r.Result.Warnings {
			b.Logf("warning: %v", w)
		}
	}
	reportMeans(b, ms)
}

// reportMeans reports the mean of each unit over ms, in name order.
func reportMeans(b *testing.B, ms []map[string]float64) {
	sums, counts := map[string]float64{}, map[string]int{}
	for _, m := range ms {
		for unit, v := range m {
			sums[unit] += v
			counts[unit]++
		}
	}
	units := make([]string, 0, len(sums))
	for u := range sums {
		units = append(units, u)
	}
	sort.Strings(units)
	for _, u := range units {
		b.ReportMetric(sums[u]/float64(counts[u]), u)
	}
}
