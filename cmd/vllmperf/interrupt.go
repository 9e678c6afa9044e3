package main

import (
	"context"
	"errors"

	"github.com/vllmperf/vllmperf/internal/exitstatus"
)

// untilCanceled runs fn, a command's CPU-bound work that takes no
// context (a gate's statistics, a history's change points), and returns
// its error, or, when ctx ends first (SIGINT, SIGTERM), an interruption
// (exit 128+N) at once: the process exits instead of computing on after
// saying it stops. fn's outputs are written by temporary file and
// rename, so a file it had not finished is left as it was.
func untilCanceled(ctx context.Context, fn func() error) error {
	if ctx == nil { // a command run without ExecuteContext
		return fn()
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return exitstatus.Interrupted(ctx, errors.New("stopped before the work ended: no report written"))
	}
}
