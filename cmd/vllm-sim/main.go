// Command vllm-sim is a simulated vLLM OpenAI-compatible server: it takes
// vllm serve's flags (plus --sim-* ones, see --help), serves /v1/completions,
// /v1/chat/completions, /v1/models, /health, /ping, /version and /metrics,
// and answers like vLLM without a GPU. It builds static (CGO_ENABLED=0) for a
// FROM scratch image; there, listen with --host 0.0.0.0.
//
//	vllm-sim Qwen/Qwen3-0.6B --port 8000 --max-num-seqs 64 --sim-gpu H100
//
// Exit status: 0 after SIGINT/SIGTERM or --help, 2 for bad arguments (as
// argparse), 1 for anything else.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/vllmperf/vllmperf/internal/vllmsim"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err))
}

// usageError is a bad command line: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitCode maps run's error to the process's exit status.
func exitCode(err error) int {
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		return 2
	}
	return 1
}

// run parses args, starts the simulator and serves until ctx is done. Logs
// go to stdout, as vLLM's; argument errors are printed argparse-style on
// stderr.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	s, err := vllmsim.New(args, stdout)
	var ae *config.ArgError
	switch {
	case errors.Is(err, config.ErrHelp):
		fmt.Fprint(stdout, config.Usage())
		return nil
	case errors.As(err, &ae):
		fmt.Fprintf(stderr, "usage: vllm-sim [MODEL] [options]\nvllm-sim: error: %s\n", ae.Msg)
		return usageError{err}
	case err != nil:
		fmt.Fprintf(stderr, "vllm-sim: %v\n", err)
		return err
	}
	ln, err := net.Listen("tcp", s.Addr())
	if err != nil {
		_ = s.Close()
		err = fmt.Errorf("listen on %s: %w (another server on that port? pick one with --port)", s.Addr(), err)
		fmt.Fprintf(stderr, "vllm-sim: %v\n", err)
		return err
	}
	if err := s.Serve(ctx, ln); err != nil {
		fmt.Fprintf(stderr, "vllm-sim: %v\n", err)
		return err
	}
	return nil
}
