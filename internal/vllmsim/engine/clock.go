package engine

import (
	"runtime"
	"time"
)

// Clock is the engine's source of time. The engine waits on AfterFunc
// deadlines, so a fake clock can run a simulation faster than real time.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f (in its own goroutine) once the clock reaches t;
	// stop cancels it and reports whether it did.
	AfterFunc(t time.Time, f func()) (stop func() bool)
}

// realClock is time itself.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) AfterFunc(t time.Time, f func()) func() bool {
	return time.AfterFunc(time.Until(t), f).Stop
}

// spinWindow is how early a real-time wait wakes from its timer to spin
// (yielding) to the deadline: Go timers on Linux can fire up to ~1–2 ms
// late when the process is idle (golang/go#44343), too coarse for
// --sim-fixed-ttft/--sim-fixed-itl precision.
const spinWindow = 1500 * time.Microsecond

// woke says why a wait ended.
type woke int

const (
	wokeDeadline woke = iota // the clock reached the deadline
	wokeSignal               // something arrived on wake
	wokeStop                 // stop closed: the engine is shutting down
)

// waitUntil waits until clock reaches t, a signal arrives on wake (nil:
// none), or stop closes, and says which came first. On the real clock the
// last spinWindow of the wait is a yielding spin, for sub-millisecond
// precision.
func waitUntil(clock Clock, t time.Time, wake, stop <-chan struct{}) woke {
	if _, real := clock.(realClock); real {
		return waitReal(t, wake, stop)
	}
	fire := make(chan struct{})
	stopTimer := clock.AfterFunc(t, func() { close(fire) })
	select {
	case <-fire:
		return wokeDeadline
	case <-wake:
		stopTimer()
		return wokeSignal
	case <-stop:
		stopTimer()
		return wokeStop
	}
}

// waitReal is waitUntil on the wall clock: a timer to spinWindow before t,
// then a spin that yields the processor until t.
func waitReal(t time.Time, wake, stop <-chan struct{}) woke {
	if d := time.Until(t) - spinWindow; d > 0 {
		tm := time.NewTimer(d)
		select {
		case <-tm.C:
		case <-wake:
			tm.Stop()
			return wokeSignal
		case <-stop:
			tm.Stop()
			return wokeStop
		}
	}
	for time.Now().Before(t) {
		select {
		case <-stop:
			return wokeStop
		default:
		}
		runtime.Gosched()
	}
	return wokeDeadline
}
