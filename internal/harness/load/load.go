// Package load is the load generator: it dispatches a run's requests to a
// Sender, closed loop (a fixed number in flight) or open loop (arrivals paced
// at a rate, optionally capped), and collects one sample.Sample per request.
//
// A run has two phases. Warm-up requests (Config.Warmup) go first, one at a
// time, marked Sample.Warmup. The measured phase starts after them
// (Result.Start) and ends when the last measured request is done
// (Result.End). Request indices run 0, 1, 2, ... across both phases in
// dispatch order, so index 0 is always the cold first request.
//
// A failed request is data: the Sender records the failure on its sample and
// the run goes on. Run returns an error only for a bad Config.
package load

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vllmperf/vllmperf/internal/harness/openai"
	"github.com/vllmperf/vllmperf/internal/harness/sample"
)

// A Sender sends one request and records it on s: Sent, Header, Chunks,
// Done, token counts, and Err when it fails. Run has set s.Index, s.Warmup
// and s.Scheduled before the call. Send must return soon after ctx is
// canceled, recording the cancellation (sample.ErrCanceled) on s. It is
// called from many goroutines at once.
type Sender interface {
	Send(ctx context.Context, req openai.Request, s *sample.Sample)
}

// SenderFunc adapts a function to the Sender interface.
type SenderFunc func(ctx context.Context, req openai.Request, s *sample.Sample)

// Send calls f.
func (f SenderFunc) Send(ctx context.Context, req openai.Request, s *sample.Sample) { f(ctx, req, s) }

// ErrGraceExpired is the cause (context.Cause) of the cancellation a Sender
// sees when its request was still in flight Config.Grace after the Duration
// deadline.
var ErrGraceExpired = errors.New("load: request still in flight when the grace period after the run's Duration expired")

// Result is what a run produced.
type Result struct {
	// Samples holds every request sent, warm-up included, in index order
	// (Samples[i].Index == i).
	Samples []sample.Sample
	// Start is when the measured phase began (after warm-up); End is when
	// the last measured request was done (Start if there was none).
	Start, End time.Time
	// MaxInFlight is the most measured requests in flight at once, as the
	// generator counted them.
	MaxInFlight int
	// Canceled is true when ctx was canceled before the run finished: the
	// samples are those of the requests sent until then.
	Canceled bool
	// Backlog counts open-loop arrivals due before the Duration deadline
	// that were never sent, because MaxConcurrency stayed full until the
	// deadline (or the generator fell behind): a nonzero Backlog means the
	// server did not keep up with Rate under the cap.
	Backlog int
	// GraceCut counts requests canceled because they were still in flight
	// Grace after the Duration deadline (their samples carry the error).
	GraceCut int
}

// Measured returns the samples of the measured phase (warm-up excluded).
func (r *Result) Measured() []sample.Sample {
	for i, s := range r.Samples {
		if !s.Warmup {
			return r.Samples[i:]
		}
	}
	return nil
}

// Run sends requests built by next (called from one goroutine, in index
// order, with the request's index) through sender as cfg describes, and
// returns every sample. Canceling ctx stops dispatch, cancels the requests in
// flight and returns what was collected, with Result.Canceled set; Run
// returns only after every Send has returned.
func Run(ctx context.Context, cfg Config, sender Sender, next func(i int) openai.Request) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if sender == nil {
		return nil, errors.New("load: sender is nil: pass the client that sends requests")
	}
	if next == nil {
		return nil, errors.New("load: next is nil: pass the function that builds request i (workload.Generator.Next)")
	}
	cfg = cfg.withDefaults()
	r := &runner{cfg: cfg, sender: sender, total: -1}
	if cfg.Requests > 0 {
		r.total = cfg.Warmup + cfg.Requests
	}
	res := &Result{}

	// Warm-up: one at a time.
	for i := 0; i < cfg.Warmup; i++ {
		if ctx.Err() != nil {
			res.Canceled = true
			break
		}
		s := &sample.Sample{Index: i, Warmup: true, Scheduled: time.Now()}
		r.samples = append(r.samples, s)
		r.send(ctx, next(i), s)
	}

	res.Start = time.Now()
	if !res.Canceled {
		res.Canceled, res.Backlog = r.dispatch(ctx, res.Start, next)
	}
	r.wg.Wait()
	if r.stopGrace != nil {
		r.stopGrace()
	}
	if r.cancelSends != nil {
		r.cancelSends(nil)
	}

	res.Samples = make([]sample.Sample, len(r.samples))
	res.End = res.Start
	for i, s := range r.samples {
		res.Samples[i] = *s
		if !s.Warmup && s.Done.After(res.End) {
			res.End = s.Done
		}
	}
	res.MaxInFlight = int(r.maxInFlight.Load())
	res.GraceCut = int(r.graceCut.Load())
	return res, nil
}

// runner holds one run's state.
type runner struct {
	cfg    Config
	sender Sender
	total  int

	samples []*sample.Sample // by index; appended by the dispatching goroutine only
	wg      sync.WaitGroup

	inFlight, maxInFlight, graceCut atomic.Int64
	stopGrace                       func() bool             // stops the grace timer
	cancelSends                     context.CancelCauseFunc // releases the requests' context

	mu   sync.Mutex // serializes Progress
	done int
}

// dispatch runs the measured phase's dispatch loop and reports whether ctx
// was canceled and, for an open loop, the backlog left at the deadline.
func (r *runner) dispatch(ctx context.Context, start time.Time, next func(int) openai.Request) (canceled bool, backlog int) {
	cfg := r.cfg
	// The requests' context outlives dispatch: Run cancels it once every
	// Send has returned; until then only ctx or the grace timer end it.
	sendCtx, cancelSends := context.WithCancelCause(ctx)
	r.cancelSends = cancelSends
	dispatchCtx := ctx
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		dispatchCtx, cancel = context.WithDeadline(ctx, start.Add(cfg.Duration))
		defer cancel()
		t := time.AfterFunc(time.Until(start.Add(cfg.Duration+cfg.Grace)), func() { cancelSends(ErrGraceExpired) })
		r.stopGrace = t.Stop
	}

	var pacer Pacer
	var slots chan struct{}
	if cfg.openLoop() {
		p, err := NewPacer(cfg.Rate, cfg.Burstiness, cfg.Seed)
		if err != nil { // unreachable after Validate; kept so a bad pacer cannot panic
			return false, 0
		}
		pacer = p
		if cfg.MaxConcurrency > 0 {
			slots = make(chan struct{}, cfg.MaxConcurrency)
		}
	} else {
		slots = make(chan struct{}, cfg.Concurrency)
	}

	deadline := start.Add(cfg.Duration)
	// over reports whether dispatch must stop; the clock is read as well as
	// the context, whose timer may fire a little after the deadline.
	over := func() bool {
		return dispatchCtx.Err() != nil || (cfg.Duration > 0 && !time.Now().Before(deadline))
	}
	for k := 0; cfg.Requests == 0 || k < cfg.Requests; k++ {
		if over() {
			if ctx.Err() != nil {
				return true, 0
			}
			if pacer != nil { // fell behind: what was due is backlog
				backlog = countDue(pacer, k, cfg)
			}
			return false, backlog
		}
		var scheduled time.Time
		if pacer != nil {
			at, stop := pacer.Arrival(k)
			if stop || (cfg.Duration > 0 && at >= cfg.Duration) {
				return false, 0
			}
			scheduled = start.Add(at)
			if !sleepUntil(dispatchCtx, scheduled) {
				return ctx.Err() != nil, 0
			}
		}
		if slots != nil {
			took := false
			select {
			case slots <- struct{}{}:
				took = true
			case <-dispatchCtx.Done():
			}
			if over() { // the deadline or ctx came first
				if took {
					<-slots
				}
				if ctx.Err() != nil {
					return true, 0
				}
				if pacer != nil {
					backlog = countDue(pacer, k, cfg)
				}
				return false, backlog
			}
		}
		if pacer == nil {
			scheduled = time.Now() // closed loop: due when a slot frees
		}
		i := cfg.Warmup + k
		s := &sample.Sample{Index: i, Scheduled: scheduled}
		r.samples = append(r.samples, s)
		req := next(i)
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			n := r.inFlight.Add(1)
			for m := r.maxInFlight.Load(); n > m && !r.maxInFlight.CompareAndSwap(m, n); m = r.maxInFlight.Load() {
			}
			r.send(sendCtx, req, s)
			r.inFlight.Add(-1)
			if s.Err != nil && errors.Is(context.Cause(sendCtx), ErrGraceExpired) {
				r.graceCut.Add(1)
			}
			if slots != nil {
				<-slots
			}
		}()
	}
	return false, 0
}

// send calls the Sender and reports progress.
func (r *runner) send(ctx context.Context, req openai.Request, s *sample.Sample) {
	r.sender.Send(ctx, req, s)
	if s.Done.IsZero() {
		s.Done = time.Now()
	}
	if r.cfg.Progress != nil {
		r.mu.Lock()
		r.done++
		r.cfg.Progress(r.done, r.total)
		r.mu.Unlock()
	}
}

// countDue counts the arrivals from k on that were due before the deadline.
func countDue(p Pacer, k int, cfg Config) int {
	n := 0
	for j := k; (cfg.Requests == 0 || j < cfg.Requests) && j < math.MaxInt32; j++ {
		at, stop := p.Arrival(j)
		if stop || at >= cfg.Duration {
			break
		}
		n++
	}
	return n
}

// sleepUntil waits until t and reports false if ctx ended first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
