package exitstatus

import (
	"context"
	"errors"
)

// UntilCanceled runs fn, a command's CPU-bound work that takes no
// context (a gate's statistics, a history's change points), and returns
// its error, or, when ctx ends first (SIGINT, SIGTERM), an interruption
// (exit 128+N) at once: the process exits instead of computing on after
// saying it stops. fn's outputs must be written by temporary file and
// rename, so that a file it had not finished is left as it was. A nil
// ctx (a command run without one) runs fn alone.
func UntilCanceled(ctx context.Context, fn func() error) error {
	if ctx == nil {
		return fn()
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return Interrupted(ctx, errors.New("stopped before the work ended: no report written"))
	}
}
