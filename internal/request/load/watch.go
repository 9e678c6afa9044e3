package load

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/overload"
	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// errOverloaded is the cause of the cancellation the requests in flight see
// when the overload rule stops the run; they end as interrupted
// (sample.ErrCanceled), counted apart from failures.
var errOverloaded = errors.New("load: the run stopped when the server was found overloaded")

// watchState is what the overload watcher reads of a run: the arrivals due
// so far (written by the dispatcher), the measured requests ended and
// completed, and the TTFTs of the first tokens that arrived since the last
// observation (written by the Senders, through sample.WithFirstToken).
type watchState struct {
	on      bool         // the run is watched; set before dispatch starts
	due     atomic.Int64 // measured arrivals due so far, sent or waiting
	mu      sync.Mutex
	ttfts   []time.Duration // first tokens since the last observation
	ended   int
	success int
	verdict atomic.Pointer[overload.Verdict]
}

// raiseDue records that n measured arrivals are due; the count only grows
// (the dispatcher learns of them in two places, waiting on a slot and
// sending).
func (w *watchState) raiseDue(n int) {
	for cur := w.due.Load(); int64(n) > cur && !w.due.CompareAndSwap(cur, int64(n)); cur = w.due.Load() {
	}
}

// end counts a measured request's end for the watcher.
func (w *watchState) end(s *sample.Sample) {
	if !w.on || s.Warmup {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ended++
	if s.OK() {
		w.success++
	}
}

// firstToken records a measured request's first token.
func (w *watchState) firstToken(ttft time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ttfts = append(w.ttfts, ttft)
}

// observe takes the run's observation at, since the measured phase began.
func (w *watchState) observe(at time.Duration) overload.Observation {
	due := int(w.due.Load())
	w.mu.Lock()
	defer w.mu.Unlock()
	o := overload.Observation{At: at, Queue: float64(max(due-w.ended, 0)), Completed: w.success, Due: due}
	if len(w.ttfts) > 0 {
		o.TTFT, o.HasTTFT = overload.Median(w.ttfts), true
		w.ttfts = w.ttfts[:0]
	}
	return o
}

// startWatch starts the overload watcher of an open loop of single
// requests when Config.Overload is set, and returns the function that
// stops it. On a verdict it stops dispatch and cancels the requests in
// flight.
func (r *runner) startWatch(start time.Time, open bool, cancelSends context.CancelCauseFunc) (stop func()) {
	if r.cfg.Overload == nil || !open || r.cfg.Turns > 1 {
		return func() {}
	}
	det, err := overload.New(*r.cfg.Overload)
	if err != nil { // unreachable after Validate
		return func() {}
	}
	r.mu.Lock()
	r.watch.on = true
	r.mu.Unlock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(det.Rule().Interval)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-r.halt:
				return
			case now := <-tick.C:
				if v := det.Add(r.watch.observe(now.Sub(start))); v != nil {
					r.watch.verdict.Store(v)
					r.stop()
					cancelSends(errOverloaded)
					return
				}
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// stop halts dispatch, once, whichever rule asks first.
func (r *runner) stop() { r.halting.Do(func() { close(r.halt) }) }

// waitSlot waits for a free slot for measured request k, due already.
// While it waits, a watched run counts the later arrivals that fall due:
// they are the client-side queue.
func (d *dispatcher) waitSlot(k int) bool {
	var tick <-chan time.Time
	if d.r.watch.on && d.pacer != nil {
		t := time.NewTicker(d.r.cfg.Overload.Interval / 2)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case d.slots <- struct{}{}:
			return true
		case <-d.dispatchCtx.Done():
			return false
		case <-d.r.halt:
			return false
		case now := <-tick:
			d.r.watch.raiseDue(d.dueBy(k, now))
		}
	}
}

// dueBy counts the measured arrivals due by now, request k being due.
func (d *dispatcher) dueBy(k int, now time.Time) int {
	n := k + 1
	for d.cfg.Requests == 0 || n < d.cfg.Requests {
		at, stop := d.pacer.Arrival(n)
		if stop || d.start.Add(at).After(now) || (d.cfg.Duration > 0 && at >= d.cfg.Duration) {
			break
		}
		n++
	}
	return n
}
