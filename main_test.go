package perf_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/vllmperf/vllmperf/internal/exitstatus"
	"github.com/vllmperf/vllmperf/internal/harness/server"
)

// TestMain: the suite stopped by SIGINT or SIGTERM (a job's timeout,
// vllmperf perf-gate passing on its own stop, Ctrl-C) removes every
// container this test binary started before it exits 128+N, so that none
// outlives it, and its GPU leases go with the process.
func TestMain(m *testing.M) {
	exitstatus.ExitOnSignal(os.Stderr, "vllmperf suite", func(ctx context.Context) {
		if n, err := server.RemoveOwn(ctx); n > 0 || err != nil {
			fmt.Fprintf(os.Stderr, "vllmperf suite: removed %d container(s) (errors: %v)\n", n, err)
		}
	})
	exitstatus.Exit(m.Run()) // after the signal's cleanup, if one runs
}
