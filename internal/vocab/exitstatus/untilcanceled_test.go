package exitstatus

import (
	"context"
	"errors"
	"syscall"
	"testing"
)

// TestUntilCanceled: work that ends returns its error; work that would
// not end returns an interruption as soon as the context ends, with the
// signal's status.
func TestUntilCanceled(t *testing.T) {
	want := errors.New("done")
	if err := UntilCanceled(context.Background(), func() error { return want }); !errors.Is(err, want) {
		t.Errorf("finished work: %v, want %v", err, want)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(SignalError{Sig: syscall.SIGTERM})
	block := make(chan struct{})
	defer close(block)
	err := UntilCanceled(ctx, func() error { <-block; return nil })
	var ie InterruptedError
	if !errors.As(err, &ie) || ie.Status() != 143 {
		t.Errorf("canceled work: %v, want an interruption with status 143", err)
	}
}
