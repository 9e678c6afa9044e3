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
// the run goes on. Run returns an error only for a bad Config. A run ends
// before its bound when the caller cancels ctx (an interruption: requests in
// flight end with sample.ErrCanceled and count apart from failures), or when
// Config.MaxConsecutiveFailures identical failures end in a row; Result.Stop
// says which.
package load

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/overload"
	"github.com/vllmperf/vllmperf/internal/run/sample"
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

// StopReason says why a run ended.
type StopReason int

// The reasons a run ends.
const (
	// StopFinished: the run reached its bound, Requests sent or the
	// Duration deadline.
	StopFinished StopReason = iota
	// StopInterrupted: ctx was canceled before every request had ended.
	StopInterrupted
	// StopFailureStreak: Config.MaxConsecutiveFailures identical failures
	// ended in a row (Result.Streak has them).
	StopFailureStreak
	// StopOverloaded: Config.Overload's rule found the server overloaded
	// (Result.Overload has the verdict).
	StopOverloaded
	// StopDecided: more requests missed Config.Misses's SLO than it
	// allows (Result.Decided says how many).
	StopDecided
)

// String names the reason: "finished", "interrupted" or "failure streak".
func (r StopReason) String() string {
	switch r {
	case StopFinished:
		return "finished"
	case StopInterrupted:
		return "interrupted"
	case StopFailureStreak:
		return "failure streak"
	case StopOverloaded:
		return "overloaded"
	case StopDecided:
		return "decided"
	}
	return fmt.Sprintf("StopReason(%d)", int(r))
}

// FailureStreak describes the identical failures that stopped a run early.
// Its Error is the message that says so.
type FailureStreak struct {
	// Count is how many requests failed in a row
	// (Config.MaxConsecutiveFailures).
	Count int
	// Err is the last of them; every one had its Kind and Status.
	Err sample.Error
	// Unsent is how many measured requests were never sent because of the
	// stop (0 when only Duration bounds the run).
	Unsent int
	// Remaining is how much of Duration was left (0 without Duration).
	Remaining time.Duration
}

func (f *FailureStreak) Error() string {
	var rest string
	switch {
	case f.Unsent > 0:
		rest = fmt.Sprintf("; %d requests not sent", f.Unsent)
	case f.Remaining > 0:
		rest = fmt.Sprintf("; %v of the run's duration left unused", f.Remaining.Round(time.Millisecond))
	}
	return fmt.Sprintf("stopped early after %d consecutive identical failures (%v)%s", f.Count, &f.Err, rest)
}

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
	// Stop says why the run ended; Streak describes the failures when it is
	// StopFailureStreak (nil otherwise).
	Stop   StopReason
	Streak *FailureStreak
	// Overload is the verdict that stopped the run when Stop is
	// StopOverloaded (nil otherwise).
	Overload *overload.Verdict
	// Decided says how many requests missed the SLO when Stop is
	// StopDecided (nil otherwise).
	Decided *Decided
	// Canceled is true when ctx was canceled before the run finished: the
	// samples are those of the requests sent until then, and those cut
	// short carry sample.ErrCanceled.
	Canceled bool
	// Backlog counts open-loop arrivals due before the Duration deadline
	// that were never sent, because MaxConcurrency stayed full until the
	// deadline (or the generator fell behind): a nonzero Backlog means the
	// server did not keep up with Rate under the cap.
	Backlog int
	// GraceCut counts requests canceled because they were still in flight
	// Grace after the Duration deadline (their samples carry
	// sample.ErrGraceExpired).
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
	r := newRunner(cfg, sender)
	end := r.warmUp(ctx, next)
	start := time.Now()
	if end.stop == StopFinished {
		end = r.measure(ctx, start, next)
	}
	return r.result(start, end), nil
}

// runner holds one run's state.
type runner struct {
	cfg    Config
	sender Sender
	total  int // Progress's total: Warmup + Requests, or -1

	samples []*sample.Sample // by index; appended by the dispatching goroutine only
	wg      sync.WaitGroup

	inFlight, maxInFlight, graceCut atomic.Int64
	interrupted                     atomic.Bool // a request ended canceled by ctx

	mu      sync.Mutex // serializes Progress and the failure count
	done    int
	streak  streak
	tripped *FailureStreak // set once, when halt is closed by the streak
	halt    chan struct{}  // closed when the failure streak or the overload rule stops the run
	halting sync.Once

	watch watchState // the overload rule's view of the run (Config.Overload)
	miss  *missCount // Config.Misses's count, nil without
}

func newRunner(cfg Config, sender Sender) *runner {
	r := &runner{cfg: cfg, sender: sender, total: -1, halt: make(chan struct{})}
	if cfg.Requests > 0 {
		r.total = (cfg.Warmup + cfg.Requests) * cfg.Turns
	}
	return r
}

// dispatchEnd is how dispatch ended.
type dispatchEnd struct {
	stop    StopReason
	sent    int       // measured requests sent
	backlog int       // open loop: arrivals due before the deadline, not sent
	at      time.Time // when dispatch stopped
}

// warmUp sends the warm-up requests one at a time; it ends early, with the
// reason, when ctx is canceled or a failure streak stops the run.
func (r *runner) warmUp(ctx context.Context, next func(int) openai.Request) dispatchEnd {
	for u := 0; u < r.cfg.Warmup; u++ {
		if stop, over := r.stopped(ctx); over {
			return dispatchEnd{stop: stop, at: time.Now()}
		}
		reqs, ss := r.unit(u, time.Now(), true, next)
		r.converse(ctx, reqs, ss)
	}
	return dispatchEnd{stop: StopFinished}
}

// stopped reports whether the run must stop before its bound, and why.
func (r *runner) stopped(ctx context.Context) (StopReason, bool) {
	switch {
	case ctx.Err() != nil:
		return StopInterrupted, true
	case r.halted() && r.watch.verdict.Load() != nil:
		return StopOverloaded, true
	case r.halted() && r.miss.result() != nil:
		return StopDecided, true
	case r.halted():
		return StopFailureStreak, true
	}
	return StopFinished, false
}

// halted reports whether the failure streak has stopped the run.
func (r *runner) halted() bool {
	select {
	case <-r.halt:
		return true
	default:
		return false
	}
}

// measure runs the measured phase from start: it dispatches the requests,
// then waits until every request has ended.
func (r *runner) measure(ctx context.Context, start time.Time, next func(int) openai.Request) dispatchEnd {
	// The requests' context ends with ctx, or when the grace period after
	// the deadline expires; it is released once every Send has returned.
	sendCtx, cancelSends := context.WithCancelCause(ctx)
	defer cancelSends(nil)
	dispatchCtx := ctx
	if r.cfg.Duration > 0 {
		var cancel context.CancelFunc
		dispatchCtx, cancel = context.WithDeadline(ctx, start.Add(r.cfg.Duration))
		defer cancel()
		grace := time.AfterFunc(time.Until(start.Add(r.cfg.Duration+r.cfg.Grace)), func() { cancelSends(ErrGraceExpired) })
		defer grace.Stop()
	}
	d, err := newDispatcher(r, ctx, dispatchCtx, sendCtx, start)
	if err != nil { // unreachable after Validate; kept so a bad pacer cannot panic
		return dispatchEnd{stop: StopFinished, at: start}
	}
	stopWatch := r.startWatch(start, d.pacer != nil, cancelSends)
	r.countMisses(start, cancelSends)
	d.withFirst = r.firstTokens()
	end := d.run(next)
	r.wg.Wait()
	stopWatch()
	if end.stop == StopFinished { // found while the last requests drained
		switch {
		case r.watch.verdict.Load() != nil:
			end.stop = StopOverloaded
		case r.miss.result() != nil:
			end.stop = StopDecided
		}
	}
	return end
}

// send calls the Sender, settles what the run itself caused (an
// interruption, the grace period's cut) and records the request's end.
func (r *runner) send(ctx context.Context, req openai.Request, s *sample.Sample) {
	r.sender.Send(ctx, req, s)
	if s.Done.IsZero() {
		s.Done = time.Now()
	}
	if s.Err != nil && s.Err.Kind == sample.ErrCanceled {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errOverloaded):
			s.Err.Message = "canceled: the run stopped when the server was found overloaded"
		case errors.Is(cause, errDecided):
			s.Err.Message = "canceled: the run stopped once too many requests had missed the SLO for it to pass"
		case errors.Is(cause, ErrGraceExpired):
			s.Err = &sample.Error{Kind: sample.ErrGraceExpired, Message: fmt.Sprintf(
				"still in flight when the grace period (%v) after the run's duration (%v) ended", r.cfg.Grace, r.cfg.Duration)}
			r.graceCut.Add(1)
		case cause != nil:
			r.interrupted.Store(true)
		}
	}
	r.finish(s)
}

// finish reports progress and counts the request into the run of identical
// failures, halting the run when the run reaches the limit.
func (r *runner) finish(s *sample.Sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done++
	if r.cfg.Progress != nil {
		r.cfg.Progress(r.done, r.total)
	}
	r.watch.end(s)
	if r.miss != nil {
		r.miss.end(s)
	}
	n := r.streak.add(s)
	if limit := r.cfg.MaxConsecutiveFailures; limit > 0 && n >= limit && r.tripped == nil && r.watch.verdict.Load() == nil && r.miss.result() == nil {
		r.tripped = &FailureStreak{Count: n, Err: r.streak.last}
		r.stop()
	}
}

// result assembles the Result once every request has ended.
func (r *runner) result(start time.Time, end dispatchEnd) *Result {
	res := &Result{
		Samples:     make([]sample.Sample, len(r.samples)),
		Start:       start,
		End:         start,
		MaxInFlight: int(r.maxInFlight.Load()),
		Stop:        end.stop,
		Backlog:     end.backlog,
		GraceCut:    int(r.graceCut.Load()),
	}
	for i, s := range r.samples {
		res.Samples[i] = *s
		if !s.Warmup && s.Done.After(res.End) {
			res.End = s.Done
		}
	}
	if res.Stop == StopFinished && r.interrupted.Load() {
		res.Stop = StopInterrupted // canceled after the last dispatch
	}
	res.Canceled = res.Stop == StopInterrupted || r.interrupted.Load()
	if res.Stop == StopFailureStreak {
		res.Streak = r.streakReport(start, end)
	}
	if res.Stop == StopOverloaded {
		res.Overload = r.watch.verdict.Load()
	}
	if res.Stop == StopDecided {
		res.Decided = r.miss.result()
	}
	return res
}

// streakReport describes the failure streak that stopped dispatch, with
// what the stop left undone.
func (r *runner) streakReport(start time.Time, end dispatchEnd) *FailureStreak {
	st := *r.tripped
	if r.cfg.Requests > 0 {
		st.Unsent = r.cfg.Requests - end.sent
	}
	if r.cfg.Duration > 0 {
		st.Remaining = max(0, start.Add(r.cfg.Duration).Sub(end.at))
	}
	return &st
}

// streak counts the requests in a row, in the order they end, that failed
// with the same kind and status.
type streak struct {
	n    int
	last sample.Error
}

// add counts s and returns the length of the current run of failures.
func (k *streak) add(s *sample.Sample) int {
	switch {
	case s.OK():
		k.n = 0
	case s.Err.Kind == sample.ErrCanceled || s.Err.Kind == sample.ErrGraceExpired:
		// The run's own doing: neither a failure of the server nor a success.
	case k.n > 0 && s.Err.Kind == k.last.Kind && s.Err.Status == k.last.Status:
		k.n++
		k.last = *s.Err
	default:
		k.n = 1
		k.last = *s.Err
	}
	return k.n
}

// dispatcher dispatches the measured phase's requests.
type dispatcher struct {
	r   *runner
	cfg Config
	// ctx is the caller's; dispatchCtx ends with it or at the Duration
	// deadline; sendCtx is the requests' (see runner.measure).
	ctx, dispatchCtx, sendCtx context.Context
	start, deadline           time.Time
	pacer                     Pacer         // nil for a closed loop
	slots                     chan struct{} // nil when nothing caps the requests in flight
	// withFirst gives a request due at scheduled its context, with the
	// watches' first-token callback (runner.firstTokens).
	withFirst func(ctx context.Context, scheduled time.Time) context.Context
}

func newDispatcher(r *runner, ctx, dispatchCtx, sendCtx context.Context, start time.Time) (*dispatcher, error) {
	d := &dispatcher{r: r, cfg: r.cfg, ctx: ctx, dispatchCtx: dispatchCtx, sendCtx: sendCtx,
		start: start, deadline: start.Add(r.cfg.Duration)}
	switch {
	case !d.cfg.openLoop():
		d.slots = make(chan struct{}, d.cfg.Concurrency)
	case d.cfg.MaxConcurrency > 0:
		d.slots = make(chan struct{}, d.cfg.MaxConcurrency)
	}
	switch {
	case d.cfg.Arrivals != nil:
		d.pacer = TracePacer(d.cfg.Arrivals)
	case d.cfg.Ramp != nil:
		p, err := NewRampPacer(*d.cfg.Ramp, d.cfg.Requests, d.cfg.Burstiness, d.cfg.Seed)
		if err != nil {
			return nil, err
		}
		d.pacer = p
	case d.cfg.openLoop():
		p, err := NewPacer(d.cfg.Rate, d.cfg.Burstiness, d.cfg.Seed)
		if err != nil {
			return nil, err
		}
		d.pacer = p
	}
	return d, nil
}

// run dispatches measured requests until the run's bound or a stop.
func (d *dispatcher) run(next func(int) openai.Request) dispatchEnd {
	for k := 0; d.cfg.Requests == 0 || k < d.cfg.Requests; k++ {
		scheduled, ok := d.await(k)
		if !ok {
			return d.ending(k)
		}
		d.launch(k, scheduled, next)
	}
	return dispatchEnd{stop: StopFinished, sent: d.cfg.Requests, at: time.Now()}
}

// await waits until measured request k may go: its arrival time (open
// loop) and a free slot. It reports false when dispatch must stop first.
func (d *dispatcher) await(k int) (scheduled time.Time, ok bool) {
	if d.over() {
		return time.Time{}, false
	}
	if d.pacer != nil {
		at, stop := d.pacer.Arrival(k)
		if stop || (d.cfg.Duration > 0 && at >= d.cfg.Duration) {
			return time.Time{}, false
		}
		scheduled = d.start.Add(at)
		if !d.sleepUntil(scheduled) {
			return time.Time{}, false
		}
		d.r.watch.raiseDue(k + 1)
	}
	if d.slots != nil && !d.acquire(k) {
		return time.Time{}, false
	}
	if d.pacer == nil {
		scheduled = time.Now() // closed loop: due when a slot frees
	}
	return scheduled, true
}

// over reports whether dispatch must stop: ctx canceled, the failure streak,
// or the deadline. The clock is read as well as the context, whose timer may
// fire a little after the deadline.
func (d *dispatcher) over() bool {
	return d.dispatchCtx.Err() != nil || d.r.halted() ||
		(d.cfg.Duration > 0 && !time.Now().Before(d.deadline))
}

// sleepUntil waits until t and reports false if dispatch must stop first.
func (d *dispatcher) sleepUntil(t time.Time) bool {
	wait := time.Until(t)
	if wait <= 0 {
		return !d.over()
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-d.dispatchCtx.Done():
	case <-d.r.halt:
	}
	return false
}

// acquire takes a slot; it reports false, holding none, when dispatch must
// stop first (or at the same moment).
func (d *dispatcher) acquire(k int) bool {
	if !d.waitSlot(k) {
		return false
	}
	if d.over() {
		<-d.slots
		return false
	}
	return true
}

// launch sends measured request k on its own goroutine.
func (d *dispatcher) launch(k int, scheduled time.Time, next func(int) openai.Request) {
	r := d.r
	reqs, ss := r.unit(d.cfg.Warmup+k, scheduled, false, next)
	r.wg.Go(func() {
		n := r.inFlight.Add(1)
		for m := r.maxInFlight.Load(); n > m && !r.maxInFlight.CompareAndSwap(m, n); m = r.maxInFlight.Load() {
		}
		r.converse(d.withFirst(d.sendCtx, scheduled), reqs, ss)
		r.inFlight.Add(-1)
		if d.slots != nil {
			<-d.slots
		}
	})
}

// ending says how dispatch ended with measured request k the first not
// sent: an open loop that stopped at its deadline counts what was due and
// not sent as backlog.
func (d *dispatcher) ending(k int) dispatchEnd {
	end := dispatchEnd{sent: k, at: time.Now()}
	if stop, over := d.r.stopped(d.ctx); over {
		end.stop = stop
		return end
	}
	if d.pacer != nil {
		end.backlog = countDue(d.pacer, k, d.cfg)
	}
	return end
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
