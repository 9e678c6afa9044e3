package clock

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

// Real is time itself.
type Real struct{}

// Now is time.Now.
func (Real) Now() time.Time { return time.Now() }

// AfterFunc is time.AfterFunc at t.
func (Real) AfterFunc(t time.Time, f func()) func() bool {
	return time.AfterFunc(time.Until(t), f).Stop
}

// spinWindow is how early a real-time wait wakes from its timer to spin
// (yielding) to the deadline: Go timers on Linux can fire up to ~1–2 ms
// late when the process is idle (golang/go#44343), too coarse for
// --sim-fixed-ttft/--sim-fixed-itl precision.
const spinWindow = 1500 * time.Microsecond

// Woke says why a wait ended.
type Woke int

const (
	Deadline Woke = iota // the clock reached the deadline
	Signal               // something arrived on wake
	Stop                 // stop closed: the engine is shutting down
)

// WaitUntil waits until c reaches t, a signal arrives on wake (nil:
// none), or stop closes, and says which came first. On the real clock the
// last spinWindow of the wait is a yielding spin, for sub-millisecond
// precision.
func WaitUntil(c Clock, t time.Time, wake, stop <-chan struct{}) Woke {
	if _, real := c.(Real); real {
		return waitReal(t, wake, stop)
	}
	fire := make(chan struct{})
	stopTimer := c.AfterFunc(t, func() { close(fire) })
	select {
	case <-fire:
		return Deadline
	case <-wake:
		stopTimer()
		return Signal
	case <-stop:
		stopTimer()
		return Stop
	}
}

// waitReal is WaitUntil on the wall clock: a timer to spinWindow before t,
// then a spin that yields the processor until t.
func waitReal(t time.Time, wake, stop <-chan struct{}) Woke {
	if d := time.Until(t) - spinWindow; d > 0 {
		tm := time.NewTimer(d)
		select {
		case <-tm.C:
		case <-wake:
			tm.Stop()
			return Signal
		case <-stop:
			tm.Stop()
			return Stop
		}
	}
	for time.Now().Before(t) {
		select {
		case <-stop:
			return Stop
		default:
		}
		runtime.Gosched()
	}
	return Deadline
}
