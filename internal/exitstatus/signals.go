package exitstatus

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// SignalContext returns a context canceled on the first SIGINT or SIGTERM,
// with a SignalError as its cause: the run stops sending, ends the
// requests in flight, writes what it has and stops the server. A second
// signal exits at once. A closed or broken stdout fails a write with EPIPE
// instead of killing the process, so outputs are still written and the
// server still stopped. stop releases the signals.
func SignalContext(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	go handleSignals(sigs, cancel, stderr)
	return ctx, func() { signal.Stop(sigs) }
}

func handleSignals(sigs <-chan os.Signal, cancel context.CancelCauseFunc, stderr io.Writer) {
	s := <-sigs
	cancel(SignalError{s.(syscall.Signal)})
	fmt.Fprintf(stderr, "vllmperf: %v: stopping; partial results follow (a second one exits at once)\n", s)
	s = <-sigs
	fmt.Fprintf(stderr, "vllmperf: second %v: exiting without cleaning up; a container left behind is found with docker ps -a --filter label=org.vllmperf.managed=true\n", s)
	os.Exit(signalOffset + int(s.(syscall.Signal)))
}
