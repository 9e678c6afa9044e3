package load

import (
	"context"
	"fmt"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// unit reserves the samples of dispatch unit u (one request, or the Turns
// requests of a conversation) and builds its requests, in index order, on
// the dispatching goroutine.
func (r *runner) unit(u int, scheduled time.Time, warmup bool, next func(int) openai.Request) ([]openai.Request, []*sample.Sample) {
	n := r.cfg.Turns
	reqs, ss := make([]openai.Request, n), make([]*sample.Sample, n)
	for t := range n {
		i := u*n + t
		ss[t] = &sample.Sample{Index: i, Warmup: warmup, Scheduled: scheduled}
		r.samples = append(r.samples, ss[t])
		reqs[t] = next(i)
	}
	return reqs, ss
}

// converse sends a unit's requests one after another: each turn after the
// first waits ThinkTime after the previous reply and carries the replies
// so far. A turn after a failed one, or once ctx is done, is not sent.
func (r *runner) converse(ctx context.Context, reqs []openai.Request, ss []*sample.Sample) {
	for t := range reqs {
		if t > 0 {
			if reason, ok := r.nextTurn(ctx, ss[t-1]); !ok {
				r.skip(ss[t:], reason)
				return
			}
			ss[t].Scheduled = time.Now()
			reqs[t] = withReplies(reqs[t], ss[:t])
		}
		r.send(ctx, reqs[t], ss[t])
	}
}

// nextTurn waits the think time after prev, and says why the next turn
// cannot go when it cannot.
func (r *runner) nextTurn(ctx context.Context, prev *sample.Sample) (*sample.Error, bool) {
	switch {
	case prev.Err != nil && (prev.Err.Kind == sample.ErrCanceled || prev.Err.Kind == sample.ErrGraceExpired):
		return &sample.Error{Kind: sample.ErrCanceled, Message: "not sent: the run ended before this turn"}, false
	case prev.Err != nil:
		return &sample.Error{Kind: sample.ErrPriorTurn, Message: fmt.Sprintf("not sent: turn of request %d failed (%s)", prev.Index, prev.Err.Kind)}, false
	}
	if r.cfg.ThinkTime > 0 {
		timer := time.NewTimer(r.cfg.ThinkTime)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-ctx.Done():
			return &sample.Error{Kind: sample.ErrCanceled, Message: "not sent: the run ended during the think time before this turn"}, false
		}
	}
	return nil, true
}

// skip records turns that were not sent.
func (r *runner) skip(ss []*sample.Sample, reason *sample.Error) {
	for _, s := range ss {
		e := *reason
		s.Err = &e
		s.Sent, s.Done = time.Now(), time.Now()
		r.finish(s)
	}
}

// withReplies puts the replies of the earlier turns in req's history, in
// order, in place of the text the workload put there.
func withReplies(req openai.Request, earlier []*sample.Sample) openai.Request {
	h := append([]openai.Turn(nil), req.History...)
	for j := 0; j < len(earlier) && j < len(h); j++ {
		h[j].Assistant = earlier[j].Text
	}
	req.History = h
	return req
}
