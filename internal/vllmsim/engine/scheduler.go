package engine

import (
	"slices"
	"time"
)

// plan is one engine step: which requests run and how many tokens each.
type plan struct {
	items     []planItem
	tokens    int
	preempted bool // requests went back to waiting: schedule again at once
}

type planItem struct {
	s      *seq
	n      int // tokens scheduled (prefill chunk, 1 for decode, 1+k with drafts)
	drafts int // draft tokens verified in this step
	start  int // numComputed before the step
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// schedule builds the next step (under e.mu), following vLLM V1's scheduler:
// running requests first (decodes and unfinished chunked prefills, in order),
// preempting the newest running request by recompute when KV blocks run
// out; then, if nothing was preempted, waiting requests FCFS while the token
// budget, max_num_seqs and free blocks allow.
func (e *Engine) schedule() plan {
	var p plan
	e.handOver(e.clock.Now())
	budget := e.scheduleRunning(&p, e.r.cfg.MaxNumBatchedTokens)
	if !p.preempted {
		e.scheduleWaiting(&p, budget)
	}
	for _, it := range p.items {
		p.tokens += it.n
	}
	// A request that cannot run even with the whole cache to itself would wait
	// forever: fail it instead (New's max_model_len check makes this rare).
	if len(p.items) == 0 && len(e.running) == 0 && len(e.waiting) > 0 && !p.preempted {
		s := e.waiting[0]
		e.waiting = e.waiting[1:]
		e.finish(s, "error", e.clock.Now(), Output{Finished: true, FinishReason: "error", Err: errNeverFits})
	}
	e.updateGauges()
	return p
}

// scheduleRunning adds the running requests to p in order, each capped by
// what is left of budget, preempting the newest running request when KV
// blocks run out; it returns the budget left.
func (e *Engine) scheduleRunning(p *plan, budget int) int {
	cfg := &e.r.cfg
	bs := cfg.BlockSize
	k := 0
	if e.r.spec != nil {
		k = e.r.spec.NumSpeculativeTokens
	}
	for i := 0; i < len(e.running) && budget > 0; i++ {
		s := e.running[i]
		need := len(s.tokens) - s.numComputed
		drafts := 0
		if s.generated > 0 && need == 1 && k > 0 {
			drafts = min(k, s.maxTokens-s.generated-1, budget-1)
			drafts = max(drafts, 0)
			need += drafts
		}
		if drafts == 0 && cfg.EnableChunkedPrefill && cfg.LongPrefillTokenThreshold > 0 {
			need = min(need, cfg.LongPrefillTokenThreshold)
		}
		need = min(need, budget)
		blocksNeeded := ceilDiv(s.numComputed+need, bs) - len(s.blocks)
		self := false
		for blocksNeeded > e.pool.NumFree {
			victim := e.running[len(e.running)-1]
			e.running = e.running[:len(e.running)-1]
			e.preempt(victim)
			p.preempted = true
			if victim == s {
				self = true
				break
			}
		}
		if self {
			break
		}
		if blocksNeeded > 0 {
			s.blocks = append(s.blocks, e.pool.Allocate(blocksNeeded)...)
		}
		p.items = append(p.items, planItem{s: s, n: need, drafts: drafts, start: s.numComputed})
		budget -= need
	}
	return budget
}

// scheduleWaiting admits waiting requests FCFS into p while the budget,
// max_num_seqs and free blocks allow; a prefill first looks up the prefix
// cache (at most prompt−1 tokens can hit) and skips the cached tokens.
func (e *Engine) scheduleWaiting(p *plan, budget int) {
	cfg := &e.r.cfg
	bs := cfg.BlockSize
	for budget > 0 && len(e.running) < cfg.MaxNumSeqs {
		i := e.nextAdmissible() // max_loras may hold the head back (lora.go)
		if i < 0 {
			return
		}
		s := e.waiting[i]
		var hit []int
		if e.pool.Caching {
			s.hashes = e.pool.Hashes(s.tokens, s.hashes)
			hit = e.pool.Lookup(s.hashes, (len(s.tokens)-1)/bs)
		}
		computed := len(hit) * bs
		need := len(s.tokens) - computed
		if !cfg.EnableChunkedPrefill && need > budget {
			e.pool.Free(hit)
			return
		}
		if cfg.EnableChunkedPrefill && cfg.LongPrefillTokenThreshold > 0 {
			need = min(need, cfg.LongPrefillTokenThreshold)
		}
		need = min(need, budget)
		blocksNeeded := ceilDiv(computed+need, bs) - len(hit)
		if blocksNeeded > e.pool.NumFree {
			e.pool.Free(hit)
			return
		}
		s.blocks = append(hit, e.pool.Allocate(blocksNeeded)...)
		s.committed = 0
		s.numComputed = computed
		if !s.scheduled {
			e.recordFirstScheduling(s, computed)
		}
		e.waiting = slices.Delete(e.waiting, i, i+1)
		e.running = append(e.running, s)
		p.items = append(p.items, planItem{s: s, n: need, start: computed})
		budget -= need
	}
}

// recordFirstScheduling records a request's first scheduling: its queue time ends,
// and the prefix cache counts its query and hits.
func (e *Engine) recordFirstScheduling(s *seq, computed int) {
	s.scheduled = true
	s.firstScheduled = e.clock.Now()
	s.cachedHit = min(computed, s.promptLen)
	e.m.Scheduled(s.firstScheduled.Sub(s.queued).Seconds(), e.pool.Caching, len(s.tokens), computed)
}

// preempt frees a running request's blocks and puts it at the front of the
// waiting queue; it will recompute its prompt and generated tokens (its freed
// blocks stay in the prefix cache until evicted).
func (e *Engine) preempt(s *seq) {
	e.pool.Free(s.blocks)
	s.blocks, s.committed = nil, 0
	s.numComputed = 0
	s.preemptions++
	e.m.Preemptions.Inc()
	e.waiting = append([]*seq{s}, e.waiting...)
}

// apply completes a step at time now (under e.mu): advances computed
// tokens, caches newly full blocks, samples and emits tokens.
func (e *Engine) apply(p plan, now time.Time) {
	bs := e.r.cfg.BlockSize
	e.m.IterTokens.Observe(float64(p.tokens))
	defer e.fe.flush(now)
	for _, it := range p.items {
		s := it.s
		if s.done || s.numComputed != it.start {
			continue // aborted or preempted while the step ran
		}
		newTokens := 1
		if it.drafts > 0 {
			acc := 0
			for acc < it.drafts && s.rng.Float64() < e.r.spec.AcceptanceRate {
				acc++
			}
			e.m.Drafted(it.drafts, acc)
			s.numComputed = it.start + 1 + acc
			newTokens = 1 + acc
		} else {
			s.numComputed = it.start + it.n
		}
		if e.pool.Caching {
			full := min(s.numComputed, len(s.tokens)) / bs
			s.hashes = e.pool.Hashes(s.tokens[:full*bs], s.hashes)
			upto := min(full, len(s.blocks))
			for i := s.committed; i < upto; i++ {
				e.pool.Commit(s.blocks[i], s.hashes[i])
			}
			s.committed = max(s.committed, upto)
		}
		if s.numComputed < len(s.tokens) {
			continue // a prefill chunk: no token yet
		}
		before := len(s.tokens)
		e.emit(s, newTokens, now)
		e.fe.output(s, len(s.tokens)-before)
	}
	e.updateGauges()
}
