package perfgate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/vllmperf/vllmperf/internal/orchestrate/gpuset"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// A perf-gate.yml matrix runs the suite in a job per profile and gates in
// one job after them: EnvStep says which half this run is.
//
// EnvStep is VLLMPERF_GATE_STEP: StepSuite, StepGate, or empty (StepAll).
var EnvStep = envvar.GateStep.Name

// The steps of EnvStep.
const (
	// StepAll plans, runs the suite and gates.
	StepAll = ""
	// StepSuite plans and runs the suite into VLLMPERF_GATE_RESULTS, and stops there
	// with go test's status: a matrix part.
	StepSuite = "suite"
	// StepGate gates VLLMPERF_GATE_RESULTS as it is: the parts' folders merged there
	// (vllmperf merge) after the matrix ran.
	StepGate = "gate"
)

// failLine starts a go test line of a failed test or benchmark.
var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: `)

// ranBefore is VLLMPERF_GATE_RESULTS' bench.txt, written before this run (StepGate),
// and 1 when a benchmark in it failed (the parts' --- FAIL: lines).
func (o Options) ranBefore() (string, int, error) {
	path := filepath.Join(o.Results, results.BenchFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, fmt.Errorf("%s=%s gates the folder the matrix's parts left in %s (merged with vllmperf merge --out %s PARTS...): %w", EnvStep, StepGate, envvar.GateResults.Name, o.Results, err)
	}
	if failLine.Match(b) {
		return path, 1, nil
	}
	return path, 0, nil
}

// benchOrSpread runs the suite as one process (bench), or, with two or
// more GPU sets (VLLMPERF_GPU_SETS), one process per profile spread over
// the sets and merged into the results folder (package spread). The gate
// reads the merged folder as it reads one process's.
func (o Options) benchOrSpread(ctx context.Context, cfg suite.Config, count int) (string, int, error) {
	switch step := envvar.GateStep.Get(); step {
	case StepAll, StepSuite:
	case StepGate:
		return o.ranBefore()
	default:
		return "", 0, fmt.Errorf("%s=%q: want %s (run the suite only: a matrix part), %s (gate %s, which holds the parts' merged folder) or nothing (both)", EnvStep, step, StepSuite, StepGate, envvar.GateResults.Name)
	}
	sets, jobs, err := spreadJobs(cfg)
	if err != nil {
		return "", 0, err
	}
	if len(sets) < 2 {
		return o.bench(ctx, count, cfg.Profiles)
	}
	abs, err := filepath.Abs(o.Results)
	if err != nil {
		return "", 0, err
	}
	so := gpuset.Options{Sets: sets, Jobs: jobs, Out: abs, Parts: abs + ".parts",
		TestArgs: []string{"-run", "^$", "-bench", "Perf", "-benchtime", "1x", "-count", strconv.Itoa(count), "-timeout", o.Timeout.String(), "."},
		Go:       o.Go, Dir: o.Dir, Env: append(os.Environ(), server.EnvJob+"="+server.Job()), Stdout: o.Stdout}
	fmt.Fprintf(o.Stdout, "perf-gate: %d profiles over %d GPU sets (%s), a go test process each; their folders under %s, merged into %s\n", len(jobs), len(sets), gpuset.EnvGPUSets, so.Parts, abs)
	res, err := gpuset.Run(ctx, so)
	path := filepath.Join(abs, results.BenchFile)
	switch {
	case ctx.Err() != nil:
		o.removeLeftovers()
		return path, 0, exitstatus.Interrupted(ctx, errors.New("the spread suite stopped; nothing gated"))
	case err != nil:
		return path, 0, err
	}
	return path, res.Code(), nil
}

// spreadJobs reads the GPU sets and the profiles' widths; no sets (nil)
// when VLLMPERF_GPU_SETS is unset.
func spreadJobs(cfg suite.Config) ([]gpuset.Set, []gpuset.Job, error) {
	if os.Getenv(gpuset.EnvGPUSets) == "" {
		return nil, nil, nil
	}
	if cfg.Backend != server.KindContainer {
		return nil, nil, fmt.Errorf("%s spreads the profiles' containers over GPU sets, but the backend is %s: use VLLMPERF_BACKEND=container, or unset %s", gpuset.EnvGPUSets, cfg.Backend, gpuset.EnvGPUSets)
	}
	var jobs []gpuset.Job
	widest := 1
	for _, name := range cfg.Profiles {
		w, err := suite.GPUs(name)
		if err != nil {
			return nil, nil, err
		}
		jobs = append(jobs, gpuset.Job{Profile: name, Width: w})
		widest = max(widest, w)
	}
	sets, err := gpuset.SetsFromEnv(widest)
	if err != nil {
		return nil, nil, err
	}
	if len(sets) < 2 {
		return sets, jobs, nil
	}
	return sets, jobs, gpuset.Check(sets, jobs)
}
