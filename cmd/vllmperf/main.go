// Command vllmperf benchmarks vLLM (or any OpenAI-compatible) servers:
// streamed requests, vLLM's latency definitions, exact percentiles, and
// results in vLLM's own JSON format.
//
//	vllmperf run --concurrency 8 --requests 200                 # embedded simulator, basic profile
//	vllmperf run --target http://127.0.0.1:8000 --model M --rate 4 --duration 2m
//	vllmperf run --backend container --profile high-throughput   # a vLLM container on the GPUs
//
// Exit status (package exitstatus): 0 success; 1 a failed run (error
// rate above --max-error-rate, a server that went down, an output not
// written, a regression); 2 a usage error; 3 an inconclusive run; 128+N
// after signal N (130 for SIGINT, 143 for SIGTERM), with the partial
// results written.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/vllmperf/vllmperf/cmd/vllmperf/internal/cliflags"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

func main() {
	ctx, stop := exitstatus.SignalContext(os.Stderr, removeOwnContainers)
	err := run(ctx, os.Stdout, os.Stderr, os.Args[1:])
	stop()
	exitstatus.Exit(exitCode(err, os.Stderr)) // after a second signal's cleanup, if one runs
}

// removeOwnContainers is what a second signal runs before exiting: the
// containers this process started are removed even then.
func removeOwnContainers(ctx context.Context) {
	if n, err := server.RemoveOwn(ctx); n > 0 || err != nil {
		fmt.Fprintf(os.Stderr, "vllmperf: removed %d container(s) of this process (errors: %v)\n", n, err)
	}
}

// Shorthands of package exitstatus, the commands' one exit policy.
type usageError = exitstatus.UsageError

var (
	usagef   = exitstatus.Usagef
	exitCode = exitstatus.Code
)

// run is the whole program, testable without a process.
func run(ctx context.Context, stdout, stderr io.Writer, args []string) error {
	root := newRootCommand(stdout, stderr)
	root.SetArgs(cliflags.JoinNargs(args)) // vLLM's --goodput ttft:200 tpot:50
	return cliflags.Explain(root.ExecuteContext(ctx))
}
