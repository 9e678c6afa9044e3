package main

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain removes the vllmperf binary the process-level tests built, and
// fails a passing run that leaves goroutines behind.
func TestMain(m *testing.M) {
	code := m.Run()
	removeBinary()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines left after the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
