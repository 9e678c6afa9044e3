package main

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// TestMain removes the vllmperf binary the process-level tests built, and
// fails a passing run that leaves goroutines behind; SIGINT or SIGTERM
// removes the containers the in-process runs started, then exits.
func TestMain(m *testing.M) {
	stop := exitstatus.ExitOnSignal(os.Stderr, "vllmperf tests", removeOwnContainers)
	code := m.Run()
	stop()
	removeBinary()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines left after the tests: %v\n", err)
			code = 1
		}
	}
	exitstatus.Exit(code) // after the signal's cleanup, if one runs
}
