package engine

import "time"

// Step is one engine step as a profiler records it: when it ran, the
// batch's composition and what it left waiting.
type Step struct {
	// Start and End bound the step on the engine's clock.
	Start, End time.Time
	// PrefillRequests are the batch's requests still computing their
	// prompt (a chunk of it with chunked prefill), PrefillTokens the
	// prompt tokens they computed.
	PrefillRequests, PrefillTokens int
	// DecodeRequests are the batch's requests generating, DecodeTokens
	// the tokens scheduled for them (one each, plus verified drafts).
	DecodeRequests, DecodeTokens int
	// DraftTokens are the speculative tokens verified in the step.
	DraftTokens int
	// Running and Waiting are the requests admitted and queued after it.
	Running, Waiting int
	// KVCacheUsage is the share of KV-cache blocks in use after it (0–1).
	KVCacheUsage float64
}

// Requests is the batch's size.
func (s Step) Requests() int { return s.PrefillRequests + s.DecodeRequests }

// Tokens is the batch's token count (the step's share of the budget).
func (s Step) Tokens() int { return s.PrefillTokens + s.DecodeTokens }

// StepObserver is an engine whose steps can be observed; Engine is one
// (the fixed-timing engine has no steps).
type StepObserver interface {
	// ObserveSteps calls f after each step the engine applies, until the
	// returned function is called. f runs on the engine's loop under its
	// lock: it must be quick and must not call the engine. A second
	// observer replaces the first.
	ObserveSteps(f func(Step)) (stop func())
}

// ObserveSteps implements StepObserver.
func (e *Engine) ObserveSteps(f func(Step)) func() {
	e.mu.Lock()
	e.observer = &f
	e.mu.Unlock()
	own := &f
	return func() {
		e.mu.Lock()
		if e.observer == own {
			e.observer = nil
		}
		e.mu.Unlock()
	}
}

// observe hands the step p, run from start to end, to the observer, if
// any (under e.mu, after apply).
func (e *Engine) observe(p plan, start, end time.Time) {
	if e.observer == nil {
		return
	}
	st := Step{Start: start, End: end, Running: len(e.running), Waiting: len(e.waiting), KVCacheUsage: e.pool.Usage()}
	for _, it := range p.items {
		if it.start < it.s.promptLen {
			st.PrefillRequests++
			st.PrefillTokens += it.n
			continue
		}
		st.DecodeRequests++
		st.DecodeTokens += it.n
		st.DraftTokens += it.drafts
	}
	(*e.observer)(st)
}
