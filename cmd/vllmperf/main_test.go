package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/vllmperf/vllmperf/internal/exitstatus"
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

// maxCommandLines bounds this folder's non-test code: the command parses
// flags and calls packages, whose logic lives along the data flow. It was
// 600 until the bisect subcommand (its cobra wiring and help text, about
// 70 lines) and the gateway, torch-profile and signal flags' wiring came.
const maxCommandLines = 700

// TestCommandStaysThin counts the folder's non-test lines against
// maxCommandLines.
func TestCommandStaysThin(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	if lines >= maxCommandLines {
		t.Errorf("cmd/vllmperf has %d non-test lines, want fewer than %d: move logic into the packages it calls (a command file is cobra wiring)", lines, maxCommandLines)
	}
	t.Logf("cmd/vllmperf: %d non-test lines", lines)
}
