// Package exitstatus is the one policy behind vllmperf's exit statuses,
// shared by every command: 0 success; 1 a failed run, check or gate; 2 a
// usage error; 3 inconclusive (only when nothing else went wrong); 128+N
// after signal N (130 for SIGINT, 143 for SIGTERM). Commands return
// errors marked with Usage, Inconclusive or Interrupted; Code prints them
// and maps them to the status.
package exitstatus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
)

// The statuses other than 128+N.
const (
	OK           = 0
	Failed       = 1
	BadUsage     = 2
	Undecided    = 3
	signalOffset = 128
)

// UsageError marks an error in how the command was called (exit 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage marks err as a usage error; nil stays nil.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return UsageError{err}
}

// Usagef is a usage error from a format.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// InconclusiveError is a run, check or gate that measured nothing that
// could pass or fail (exit 3); its outputs are written all the same.
type InconclusiveError struct{ Reason string }

// inconclusiveWord is verdict.Inconclusive, spelt here because package
// verdict imports this one (its exit policy); verdict's tests hold the two
// equal.
const inconclusiveWord = "INCONCLUSIVE"

func (e InconclusiveError) Error() string { return inconclusiveWord + ": " + e.Reason }

// Inconclusive is an InconclusiveError for reason.
func Inconclusive(reason string) error { return InconclusiveError{reason} }

// SignalError is the cause of a run's cancellation by a signal.
type SignalError struct{ Sig syscall.Signal }

func (e SignalError) Error() string { return SignalName(e.Sig) }

// SignalName names a signal as shells do: SIGINT, SIGTERM.
func SignalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// InterruptedError is a run stopped by a signal (or its caller): exit
// status 128 + the signal's number, 130 when no signal is known.
type InterruptedError struct {
	Cause error // the context's cause: a SignalError when a signal came
	Msg   string
}

func (e InterruptedError) Error() string { return e.Msg }

// Status is 128 + the signal's number.
func (e InterruptedError) Status() int {
	var se SignalError
	if errors.As(e.Cause, &se) {
		return signalOffset + int(se.Sig)
	}
	return signalOffset + int(syscall.SIGINT)
}

// Cause is ctx's cancellation cause, context.Canceled when it has none.
func Cause(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return context.Canceled
}

// Interrupted marks err as the end of a run the user interrupted (exit
// 128+N) when ctx was canceled; otherwise it returns err unchanged.
func Interrupted(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	cause := Cause(ctx)
	return InterruptedError{Cause: cause, Msg: fmt.Sprintf("interrupted (%v): %v", cause, err)}
}

// Code prints err, one "vllmperf: " line per joined error, and maps it to
// the process exit status: 0 success, 128+N interrupted by signal N, 2
// usage error, 3 inconclusive (only when nothing else went wrong), 1
// anything else.
func Code(err error, stderr io.Writer) int {
	if err == nil {
		return OK
	}
	for _, e := range Flatten(err) {
		fmt.Fprintln(stderr, "vllmperf:", strings.TrimRight(e.Error(), "\n"))
	}
	var ie InterruptedError
	var ue UsageError
	switch {
	case errors.As(err, &ie):
		return ie.Status()
	case errors.As(err, &ue):
		return BadUsage
	case onlyInconclusive(err):
		return Undecided
	default:
		return Failed
	}
}

// Flatten lists the errors of a join (errors.Join), or err alone.
func Flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// onlyInconclusive reports whether every error in err is an
// InconclusiveError.
func onlyInconclusive(err error) bool {
	for _, e := range Flatten(err) {
		var ie InconclusiveError
		if !errors.As(e, &ie) {
			return false
		}
	}
	return true
}
