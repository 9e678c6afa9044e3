package exitstatus

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
)

func TestCode(t *testing.T) {
	t.Parallel()
	sigterm, cancel := context.WithCancelCause(context.Background())
	cancel(SignalError{Sig: syscall.SIGTERM})
	for _, tc := range []struct {
		name  string
		err   error
		want  int
		lines int // "vllmperf: " lines printed
	}{
		// nothing went wrong
		{"nil", nil, OK, 0},
		// any other error fails
		{"plain", errors.New("boom"), Failed, 1},
		// how the command was called
		{"usage", Usagef("--x %d: want 1", 2), BadUsage, 1},
		// nothing measured that could pass or fail
		{"inconclusive", Inconclusive("no request succeeded"), Undecided, 1},
		// inconclusive only when nothing else went wrong
		{"inconclusive and failed", errors.Join(errors.New("error rate"), Inconclusive("none")), Failed, 2},
		// a usage error wins over a failure
		{"usage and failed", errors.Join(errors.New("x"), Usage(errors.New("y"))), BadUsage, 2},
		// a signal's number, whatever else went wrong
		{"SIGTERM", errors.Join(Interrupted(sigterm, errors.New("stopped")), errors.New("x")), 128 + 15, 2},
		// interrupted without a known signal: as SIGINT
		{"no signal", InterruptedError{Cause: context.Canceled, Msg: "stopped"}, 130, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			if got := Code(tc.err, &out); got != tc.want {
				t.Errorf("Code = %d, want %d", got, tc.want)
			}
			if got := strings.Count(out.String(), "vllmperf: "); got != tc.lines {
				t.Errorf("printed %d lines, want %d:\n%s", got, tc.lines, out.String())
			}
		})
	}
}

func TestInterrupted(t *testing.T) {
	t.Parallel()
	err := errors.New("boom")
	if got := Interrupted(context.Background(), err); got != err {
		t.Errorf("a live context changed the error: %v", got)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(SignalError{Sig: syscall.SIGINT})
	got := Interrupted(ctx, err)
	if want := "interrupted (SIGINT): boom"; got.Error() != want {
		t.Errorf("Interrupted = %q, want %q", got, want)
	}
	if Usage(nil) != nil {
		t.Error("Usage(nil) is not nil")
	}
}
