package server

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// TestMain removes this run's containers when it is interrupted
// (SIGINT or SIGTERM; exit 128+N), and fails
// the run when any container it labelled is left behind (the docker ps -a
// --filter label check).
func TestMain(m *testing.M) {
	exitstatus.ExitOnSignal(os.Stderr, "server tests", func(ctx context.Context) {
		n, err := reap(ctx, session())
		fmt.Fprintf(os.Stderr, "server tests: removed %d container(s) (errors: %v)\n", n, err)
	})
	code := m.Run()
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	if DockerAvailable(ctx) == nil {
		left, err := listManaged(ctx, session())
		switch {
		case err != nil:
			fmt.Fprintf(os.Stderr, "server tests: cannot list labelled containers: %v\n", err)
			code = 1
		case len(left) > 0:
			fmt.Fprintf(os.Stderr, "server tests: FAIL: %d container(s) labelled %s=true left behind: %s\n", len(left), labelManaged, strings.Join(left, ", "))
			_, _ = reap(ctx, session())
			code = 1
		}
	}
	exitstatus.Exit(code) // after the signal's cleanup, if one runs
}

// needDocker skips the test where no Docker engine answers, except under
// CI=true, where the container path must be exercised and a missing engine
// fails.
func needDocker(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := DockerAvailable(ctx); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Docker is required under CI=true: %v (start dockerd)", err)
		}
		t.Skipf("Docker not available (%v): container tests skipped; with CI=true they fail instead", err)
	}
}
