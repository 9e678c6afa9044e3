// Command vllmperf benchmarks vLLM (or any OpenAI-compatible) servers:
// streamed requests, vLLM's latency definitions, exact percentiles, and
// results in vLLM's own JSON format.
//
//	vllmperf run --concurrency 8 --requests 200                 # embedded simulator, basic profile
//	vllmperf run --target http://127.0.0.1:8000 --model M --rate 4 --duration 2m
//	vllmperf run --backend container --profile high-throughput   # a vLLM container on the GPUs
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// usageError marks errors in how the command was called (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// exitCode prints err and maps it to the process exit status:
// 0 success, 2 usage error, 3 inconclusive run, 1 anything else.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "vllmperf:", err)
	var ue usageError
	var ie inconclusiveError
	switch {
	case errors.As(err, &ue):
		return 2
	case errors.As(err, &ie):
		return 3
	default:
		return 1
	}
}

// run is the whole program, testable without a process.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	root := newRootCommand(stdout, stderr)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}
