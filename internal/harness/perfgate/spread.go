package perfgate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/vllmperf/vllmperf/internal/exitstatus"
	"github.com/vllmperf/vllmperf/internal/harness/results"
	"github.com/vllmperf/vllmperf/internal/harness/server"
	"github.com/vllmperf/vllmperf/internal/harness/spread"
	"github.com/vllmperf/vllmperf/internal/harness/suite"
)

// benchOrSpread runs the suite as one process (bench), or, with two or
// more GPU sets (VLLMPERF_GPU_SETS), one process per profile spread over
// the sets and merged into the results folder (package spread). The gate
// reads the merged folder as it reads one process's.
func (o Options) benchOrSpread(ctx context.Context, cfg suite.Config, count int) (string, int, error) {
	sets, jobs, err := spreadJobs(cfg)
	if err != nil {
		return "", 0, err
	}
	if len(sets) < 2 {
		return o.bench(ctx, count)
	}
	abs, err := filepath.Abs(o.Results)
	if err != nil {
		return "", 0, err
	}
	so := spread.Options{Sets: sets, Jobs: jobs, Out: abs, Parts: abs + ".parts",
		TestArgs: []string{"-run", "^$", "-bench", "Perf", "-benchtime", "1x", "-count", strconv.Itoa(count), "-timeout", o.Timeout.String(), "."},
		Go:       o.Go, Dir: o.Dir, Env: append(os.Environ(), server.EnvJob+"="+server.Job()), Stdout: o.Stdout}
	fmt.Fprintf(o.Stdout, "perf-gate: %d profiles over %d GPU sets (%s), a go test process each; their folders under %s, merged into %s\n", len(jobs), len(sets), spread.EnvGPUSets, so.Parts, abs)
	res, err := spread.Run(ctx, so)
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
func spreadJobs(cfg suite.Config) ([]spread.Set, []spread.Job, error) {
	if os.Getenv(spread.EnvGPUSets) == "" {
		return nil, nil, nil
	}
	if cfg.Backend != server.KindContainer {
		return nil, nil, fmt.Errorf("%s spreads the profiles' containers over GPU sets, but the backend is %s: use VLLMPERF_BACKEND=container, or unset %s", spread.EnvGPUSets, cfg.Backend, spread.EnvGPUSets)
	}
	var jobs []spread.Job
	widest := 1
	for _, name := range cfg.Profiles {
		w, err := suite.GPUs(name)
		if err != nil {
			return nil, nil, err
		}
		jobs = append(jobs, spread.Job{Profile: name, Width: w})
		widest = max(widest, w)
	}
	sets, err := spread.SetsFromEnv(widest)
	if err != nil {
		return nil, nil, err
	}
	if len(sets) < 2 {
		return sets, jobs, nil
	}
	return sets, jobs, spread.Check(sets, jobs)
}
