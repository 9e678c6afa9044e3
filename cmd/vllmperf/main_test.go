package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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

// maxCommandLines bounds this folder's non-test code: the command parses
// flags and calls packages, whose logic lives along the data flow. It was
// 600 until the bisect subcommand (its cobra wiring and help text, about
// 70 lines) and the gateway, torch-profile and signal flags' wiring came.
const maxCommandLines = 700

// TestCommandStaysThin counts the folder's own non-test lines (its *.go,
// the cobra wiring) against maxCommandLines. internal/ below it holds
// command-only packages moved out of the libraries (historycli, runflags, cliflags, gatecli:
// flags and subcommands, no pipeline logic); they are not counted against
// the cap, and their lines are logged beside it.
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
	t.Logf("cmd/vllmperf: %d non-test lines; internal/: %d more (not capped)", lines, internalLines(t))
}

// internalLines counts the non-test lines of internal/'s packages.
func internalLines(t *testing.T) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir("internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		n += bytes.Count(b, []byte("\n"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
