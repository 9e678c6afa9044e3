package exitstatus

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Every level that starts another (make, vllmperf, the go test it runs,
// the test binary) handles SIGINT and SIGTERM alike: the first one stops
// the work, the children are told and waited for, and every container the
// process started is removed before it exits. The same stop often arrives
// twice: `timeout` signals its whole process group and make forwards
// SIGTERM to its children as well, so a repeat of the first signal within
// DuplicateWindow counts as the same stop, not as a second one.
const (
	// DuplicateWindow is how soon a repeat of the first signal is taken
	// for the same stop (make's forwarding beside timeout's group signal
	// arrive within milliseconds of each other).
	DuplicateWindow = time.Second
	// CleanupTimeout bounds the removal of a process's containers after a
	// second signal, or in a test binary after its first.
	CleanupTimeout = 20 * time.Second
)

// SignalContext returns a context canceled on the first SIGINT or SIGTERM,
// with a SignalError as its cause: the run stops sending, ends the
// requests in flight, writes what it has and stops the server. A second
// signal exits at once, after cleanup (bounded by CleanupTimeout: the
// removal of the process's containers, so that even then none is left
// behind); a third exits without waiting for it. A closed or broken
// stdout fails a write with EPIPE instead of killing the process, so
// outputs are still written and the server still stopped. stop releases
// the signals.
func SignalContext(stderr io.Writer, cleanup ...func(context.Context)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	h := handler{sigs: sigs, stderr: stderr, cleanup: cleanup, exit: os.Exit, window: DuplicateWindow}
	go h.run(cancel)
	return ctx, func() { signal.Stop(sigs) }
}

// ExitOnSignal is the signal handling of a process that has no run to
// cancel, such as a test binary's TestMain: the first SIGINT or SIGTERM
// runs cleanup (bounded by CleanupTimeout; a second signal exits without
// waiting for it) and exits 128+N, naming the signal as who; a broken
// stdout or stderr (go test killed beside it) no longer kills it. stop
// releases the signals and ends the goroutine that waits for them.
func ExitOnSignal(stderr io.Writer, who string, cleanup func(context.Context)) (stop func()) {
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	h := handler{sigs: sigs, stderr: stderr, cleanup: []func(context.Context){cleanup}, exit: os.Exit, window: DuplicateWindow}
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case s := <-sigs:
			// A go test killed by the same signal leaves this binary's
			// stdout and stderr broken pipes: a write must fail with EPIPE,
			// not kill the process before its cleanup.
			signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
			sig := s.(syscall.Signal)
			fmt.Fprintf(stderr, "%s: %s: removing what this process started, then exiting\n", who, SignalName(sig))
			h.cleanupAndExit(sig, time.Now())
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { signal.Stop(sigs); close(done) }) }
}

// handler is SignalContext's loop, apart from the process for tests.
type handler struct {
	sigs    <-chan os.Signal
	stderr  io.Writer
	cleanup []func(context.Context)
	exit    func(int)
	window  time.Duration // DuplicateWindow
}

func (h handler) run(cancel context.CancelCauseFunc) {
	first := (<-h.sigs).(syscall.Signal)
	at := time.Now()
	cancel(SignalError{first})
	fmt.Fprintf(h.stderr, "vllmperf: %s: stopping; partial results follow (a second one exits after removing this process's containers)\n", SignalName(first))
	for {
		s := (<-h.sigs).(syscall.Signal)
		if s == first && time.Since(at) < h.window {
			continue // the same stop, delivered twice (make and timeout)
		}
		fmt.Fprintf(h.stderr, "vllmperf: second %s: removing this process's containers, then exiting (a third exits at once; a container left behind is removed by the next vllmperf start)\n", SignalName(s))
		h.cleanupAndExit(s, time.Now())
		return
	}
}

// forcing is closed once a signal's cleanup has begun: Exit then leaves
// the exit to it.
var (
	forcing     = make(chan struct{})
	forcingOnce sync.Once
)

// Exit exits the process with code, unless a second signal's cleanup
// (or ExitOnSignal's) is under way: then it waits for that to end the
// process, so that the run's own end cannot cut the removal of its
// containers short.
func Exit(code int) {
	select {
	case <-forcing:
		select {} // the cleanup exits, within CleanupTimeout
	default:
		os.Exit(code)
	}
}

// cleanupAndExit runs the cleanups on a context bounded by CleanupTimeout
// and exits 128+s; another signal meanwhile (not a duplicate) exits at
// once.
func (h handler) cleanupAndExit(s syscall.Signal, at time.Time) {
	forcingOnce.Do(func() { close(forcing) })
	ctx, cancel := context.WithTimeout(context.Background(), CleanupTimeout)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, f := range h.cleanup {
			f(ctx)
		}
	}()
	for {
		select {
		case <-done:
			h.exit(signalOffset + int(s))
			return
		case again := <-h.sigs:
			if again == s && time.Since(at) < h.window {
				continue
			}
			fmt.Fprintf(h.stderr, "vllmperf: %s again: exiting without waiting for the cleanup\n", SignalName(again.(syscall.Signal)))
			h.exit(signalOffset + int(again.(syscall.Signal)))
			return
		}
	}
}
