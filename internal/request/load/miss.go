package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// Misses stops a run whose verdict on an SLO is already certain: once more
// than Allowed measured requests missed it, no further request can make the
// run pass (a capacity search's goodput minimum allows that many misses at
// most). A request misses when its first token comes later than TTFT (known
// while it is in flight) or when Missed says so once it ends (a failure, a
// TPOT or E2EL over its limit); each request counts once.
type Misses struct {
	// Allowed is how many misses the run may have and still pass.
	Allowed int
	// TTFT is the SLO's first-token limit (0: none).
	TTFT time.Duration
	// Missed judges an ended request; nil judges none at their end.
	Missed func(*sample.Sample) bool
}

// Decided describes the misses that stopped a run; its Error is the
// message.
type Decided struct {
	// Missed is how many measured requests missed the SLO when the run
	// stopped, Allowed how many it could afford.
	Missed, Allowed int
	// At is when, since the measured phase began.
	At time.Duration
}

func (d *Decided) Error() string {
	return fmt.Sprintf("stopped %v into the run: %d requests missed the SLO, more than the %d a passing run allows, so the run fails whatever the rest would do",
		d.At.Round(100*time.Millisecond), d.Missed, d.Allowed)
}

// errDecided is the cause of the cancellation the requests in flight see
// when Misses stops the run; they end as interrupted.
var errDecided = errors.New("load: the run stopped once its SLO verdict was certain")

// missCount counts a run's misses.
type missCount struct {
	cfg     *Misses
	start   time.Time
	mu      sync.Mutex
	n       int
	decided *Decided
	trip    func() // stops dispatch and cancels the requests in flight
}

// firstToken counts a first token over the TTFT limit.
func (m *missCount) firstToken(ttft time.Duration) {
	if m.cfg.TTFT > 0 && ttft > m.cfg.TTFT {
		m.add()
	}
}

// end counts an ended measured request that missed, unless its first
// token already counted it.
func (m *missCount) end(s *sample.Sample) {
	if s.Warmup || s.Interrupted() || m.cfg.Missed == nil {
		return
	}
	// Its first token, if one came (a failure after it included), was
	// judged when it arrived.
	if len(s.Chunks) > 0 && m.cfg.TTFT > 0 && s.Chunks[0].At > m.cfg.TTFT {
		return
	}
	if m.cfg.Missed(s) {
		m.add()
	}
}

func (m *missCount) add() {
	m.mu.Lock()
	m.n++
	trip := m.n > m.cfg.Allowed && m.decided == nil
	if trip {
		m.decided = &Decided{Missed: m.n, Allowed: m.cfg.Allowed, At: time.Since(m.start)}
	}
	m.mu.Unlock()
	if trip {
		m.trip()
	}
}

// result is the decision that stopped the run, nil when none did.
func (m *missCount) result() *Decided {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.decided
}

// countMisses starts counting Config.Misses, when set, from start.
func (r *runner) countMisses(start time.Time, cancelSends context.CancelCauseFunc) {
	if r.cfg.Misses == nil {
		return
	}
	m := &missCount{cfg: r.cfg.Misses, start: start, trip: func() { r.stop(); cancelSends(errDecided) }}
	r.mu.Lock()
	r.miss = m
	r.mu.Unlock()
}

// firstTokens returns the function that gives a measured request due at
// scheduled the context it is sent with: one carrying the first-token
// callback of what watches the run (the overload rule, from the arrival
// due, client-side queue included; the miss count, from the send, as TTFT
// is defined), or the context itself when nothing does.
func (r *runner) firstTokens() func(ctx context.Context, scheduled time.Time) context.Context {
	watch, miss := r.watch.on, r.miss
	if !watch && miss == nil {
		return func(ctx context.Context, _ time.Time) context.Context { return ctx }
	}
	return func(ctx context.Context, scheduled time.Time) context.Context {
		return sample.WithFirstToken(ctx, func(sent, at time.Time) {
			if watch {
				r.watch.firstToken(at.Sub(scheduled))
			}
			if miss != nil {
				miss.firstToken(at.Sub(sent))
			}
		})
	}
}
