package engine

import (
	"context"
	"sync"
)

// outbox decouples the engine from slow consumers: the engine never blocks
// on a request's channel. An output goes straight to a waiting receiver when
// nothing is queued before it; otherwise it is queued and a goroutine
// delivers it, merging outputs that piled up into one (as vLLM's
// RequestOutputCollector does).
type outbox struct {
	ctx       context.Context
	ch        chan Output
	mu        sync.Mutex
	q         []Output
	sending   bool // the goroutine holds outputs it has not delivered yet
	ended     bool // the last output was delivered directly
	closed    bool // ch is closed: drop whatever comes
	notify    chan struct{}
	stopAbort func() bool
}

func newOutbox(ctx context.Context, ch chan Output) *outbox {
	return &outbox{ctx: ctx, ch: ch, notify: make(chan struct{}, 1)}
}

func (o *outbox) push(out Output) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	if len(o.q) == 0 && !o.sending && !o.ended {
		select {
		case o.ch <- out:
			if out.Finished || out.Err != nil {
				o.ended = true
				o.mu.Unlock()
				o.kick()
				return
			}
			o.mu.Unlock()
			return
		default:
		}
	}
	o.q = append(o.q, out)
	o.mu.Unlock()
	o.kick()
}

func (o *outbox) kick() {
	select {
	case o.notify <- struct{}{}:
	default:
	}
}

func (o *outbox) run() {
	defer func() {
		o.mu.Lock()
		o.closed = true
		o.q = nil
		close(o.ch)
		o.mu.Unlock()
	}()
	defer func() {
		if o.stopAbort != nil {
			o.stopAbort()
		}
	}()
	for {
		select {
		case <-o.notify:
		case <-o.ctx.Done():
			// The consumer is gone; the engine's abort still accounts for it.
			return
		}
		o.mu.Lock()
		if o.ended {
			o.mu.Unlock()
			return
		}
		q := o.q
		o.q = nil
		o.sending = len(q) > 0
		o.mu.Unlock()
		for _, out := range mergeOutputs(q) {
			select {
			case o.ch <- out:
			case <-o.ctx.Done():
				return
			}
			if out.Finished || out.Err != nil {
				return
			}
		}
		o.mu.Lock()
		o.sending = false
		more := len(o.q) > 0
		o.mu.Unlock()
		if more {
			o.kick()
		}
	}
}

// mergeOutputs joins consecutive token outputs; an output carrying Err is
// kept separate so tokens are never lost behind it.
func mergeOutputs(q []Output) []Output {
	var res []Output
	for _, out := range q {
		n := len(res)
		if n > 0 && res[n-1].Err == nil && !res[n-1].Finished && out.Err == nil {
			prev := &res[n-1]
			prev.Tokens = append(prev.Tokens, out.Tokens...)
			prev.Finished, prev.FinishReason = out.Finished, out.FinishReason
			continue
		}
		res = append(res, out)
	}
	return res
}
