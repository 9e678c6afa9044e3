package perf_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// TestMain: the suite stopped by SIGINT or SIGTERM (a job's timeout,
// vllmperf perf-gate passing on its own stop, Ctrl-C) removes every
// container this test binary started before it exits 128+N, so that none
// outlives it, and its GPU leases go with the process. The tests and
// benchmarks run through suite.Main: with VLLMPERF_RESULTS set, a
// benchmark run leaves its own bench.txt in the results folder (a tee's
// is kept), which every suite of this process writes together.
func TestMain(m *testing.M) {
	exitstatus.ExitOnSignal(os.Stderr, "vllmperf suite", func(ctx context.Context) {
		if n, err := server.RemoveOwn(ctx); n > 0 || err != nil {
			fmt.Fprintf(os.Stderr, "vllmperf suite: removed %d container(s) (errors: %v)\n", n, err)
		}
	})
	exitstatus.Exit(suite.Main(m)) // after the signal's cleanup, if one runs
}
