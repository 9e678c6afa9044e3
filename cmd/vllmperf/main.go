// Command vllmperf benchmarks vLLM (or any OpenAI-compatible) servers:
// streamed requests, vLLM's latency definitions, exact percentiles, and
// results in vLLM's own JSON format.
//
//	vllmperf run --concurrency 8 --requests 200                 # embedded simulator, basic profile
//	vllmperf run --target http://127.0.0.1:8000 --model M --rate 4 --duration 2m
//	vllmperf run --backend container --profile high-throughput   # a vLLM container on the GPUs
//
// Exit status: 0 success; 1 a failed run (failure rate above
// --max-failure-rate, a server that went down, an output not written, a
// regression); 2 a usage error; 3 an inconclusive run; 128+N after signal
// N (130 for SIGINT, 143 for SIGTERM), with the partial results written.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	// A closed or broken stdout must fail a write with EPIPE instead of
	// killing the process: outputs are written first and the server is
	// still stopped (a container removed) when stdout is gone.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	go handleSignals(sigs, cancel, os.Stderr)
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	signal.Stop(sigs)
	os.Exit(exitCode(err, os.Stderr))
}

// handleSignals cancels the run on the first SIGINT or SIGTERM, with the
// signal as the cause: the run stops sending, ends the requests in flight,
// writes what it has and stops the server. A second signal exits at once.
func handleSignals(sigs <-chan os.Signal, cancel context.CancelCauseFunc, stderr io.Writer) {
	s, ok := <-sigs
	if !ok {
		return
	}
	cancel(signalError{s.(syscall.Signal)})
	fmt.Fprintf(stderr, "vllmperf: %v: stopping; partial results follow (a second one exits at once)\n", s)
	s = <-sigs
	fmt.Fprintf(stderr, "vllmperf: second %v: exiting without cleaning up; a container left behind is found with docker ps -a --filter label=org.vllmperf.managed=true\n", s)
	os.Exit(128 + int(s.(syscall.Signal)))
}

// signalError is the cause of a run's cancellation by a signal.
type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string { return signalName(e.sig) }

// signalName names a signal as shells do: SIGINT, SIGTERM.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// usageError marks errors in how the command was called (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// interruptedError is a run stopped by a signal (or its caller): exit
// status 128 + the signal's number, 130 when no signal is known.
type interruptedError struct {
	cause error // the context's cause: a signalError when a signal came
	msg   string
}

func (e interruptedError) Error() string { return e.msg }

// exitStatus is 128 + the signal's number.
func (e interruptedError) exitStatus() int {
	var se signalError
	if errors.As(e.cause, &se) {
		return 128 + int(se.sig)
	}
	return 128 + int(syscall.SIGINT)
}

// exitCode prints err, one "vllmperf: " line per joined error, and maps it
// to the process exit status: 0 success, 128+N interrupted by signal N, 2
// usage error, 3 inconclusive run (only when nothing else went wrong), 1
// anything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	for _, e := range flatten(err) {
		fmt.Fprintln(stderr, "vllmperf:", strings.TrimRight(e.Error(), "\n"))
	}
	var ie interruptedError
	var ue usageError
	switch {
	case errors.As(err, &ie):
		return ie.exitStatus()
	case errors.As(err, &ue):
		return 2
	case onlyInconclusive(err):
		return 3
	default:
		return 1
	}
}

// flatten lists the errors of a join (errors.Join), or err alone.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// onlyInconclusive reports whether every error in err is an
// inconclusiveError.
func onlyInconclusive(err error) bool {
	for _, e := range flatten(err) {
		var ie inconclusiveError
		if !errors.As(e, &ie) {
			return false
		}
	}
	return true
}

// run is the whole program, testable without a process.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}
