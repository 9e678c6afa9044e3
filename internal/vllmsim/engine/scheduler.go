package engine

import (
	"math"
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
	cfg := &e.r.cfg
	bs := cfg.BlockSize
	budget := cfg.MaxNumBatchedTokens
	var p plan
	preempted := false
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
		for blocksNeeded > e.pool.numFree {
			victim := e.running[len(e.running)-1]
			e.running = e.running[:len(e.running)-1]
			e.preempt(victim)
			preempted = true
			if victim == s {
				self = true
				break
			}
		}
		if self {
			break
		}
		if blocksNeeded > 0 {
			s.blocks = append(s.blocks, e.pool.allocate(blocksNeeded)...)
		}
		p.items = append(p.items, planItem{s: s, n: need, drafts: drafts, start: s.numComputed})
		budget -= need
	}

	for !preempted && len(e.waiting) > 0 && budget > 0 && len(e.running) < cfg.MaxNumSeqs {
		s := e.waiting[0]
		var hit []int
		if e.pool.caching {
			s.hashes = e.pool.hashes(s.tokens, s.hashes)
			hit = e.pool.lookup(s.hashes, (len(s.tokens)-1)/bs)
		}
		computed := len(hit) * bs
		need := len(s.tokens) - computed
		undo := func() { e.pool.free(hit) }
		if !cfg.EnableChunkedPrefill && need > budget {
			undo()
			break
		}
		if cfg.EnableChunkedPrefill && cfg.LongPrefillTokenThreshold > 0 {
			need = min(need, cfg.LongPrefillTokenThreshold)
		}
		need = min(need, budget)
		blocksNeeded := ceilDiv(computed+need, bs) - len(hit)
		if blocksNeeded > e.pool.numFree {
			undo()
			break
		}
		s.blocks = append(hit, e.pool.allocate(blocksNeeded)...)
		s.numComputed = computed
		if !s.scheduled {
			s.scheduled = true
			s.firstScheduled = e.clock.Now()
			s.cachedHit = min(computed, s.promptLen)
			if e.pool.caching {
				e.m.prefixQueries.Add(float64(len(s.tokens)))
				e.m.prefixHits.Add(float64(computed))
			}
		}
		e.waiting = e.waiting[1:]
		e.running = append(e.running, s)
		p.items = append(p.items, planItem{s: s, n: need, start: computed})
		budget -= need
	}
	for _, it := range p.items {
		p.tokens += it.n
	}
	p.preempted = preempted
	// A request that cannot run even with the whole cache to itself would wait
	// forever: fail it instead (New's max_model_len check makes this rare).
	if len(p.items) == 0 && len(e.running) == 0 && len(e.waiting) > 0 && !preempted {
		s := e.waiting[0]
		e.waiting = e.waiting[1:]
		e.finish(s, "error", e.clock.Now(), Output{Finished: true, FinishReason: "error", Err: errNeverFits})
	}
	e.updateGauges()
	return p
}

// preempt frees a running request's blocks and puts it at the front of the
// waiting queue; it will recompute its prompt and generated tokens (its freed
// blocks stay in the prefix cache until evicted).
func (e *Engine) preempt(s *seq) {
	e.pool.free(s.blocks)
	s.blocks = nil
	s.numComputed = 0
	s.preemptions++
	e.m.preemptions.Inc()
	e.waiting = append([]*seq{s}, e.waiting...)
}

// apply completes a step at time now (under e.mu): advances computed
// tokens, caches newly full blocks, samples and emits tokens.
func (e *Engine) apply(p plan, now time.Time) {
	bs := e.r.cfg.BlockSize
	e.m.iterTokens.Observe(float64(p.tokens))
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
			e.m.specDrafts.Inc()
			e.m.specDraftTokens.Add(float64(it.drafts))
			e.m.specAccepted.Add(float64(acc))
			for i := 0; i < acc; i++ {
				e.m.specPerPos[i].Inc()
			}
			s.numComputed = it.start + 1 + acc
			newTokens = 1 + acc
		} else {
			s.numComputed = it.start + it.n
		}
		if e.pool.caching {
			full := min(s.numComputed, len(s.tokens)) / bs
			s.hashes = e.pool.hashes(s.tokens[:full*bs], s.hashes)
			for i := 0; i < full && i < len(s.blocks); i++ {
				e.pool.commit(s.blocks[i], s.hashes[i])
			}
		}
		if s.numComputed < len(s.tokens) {
			continue // a prefill chunk: no token yet
		}
		e.emit(s, newTokens, now)
	}
	e.updateGauges()
}

// stepTime is the roofline timing model for one step:
//
//	GPU path  = StepOverhead + max(compute, memory) + all-reduce + draft cost
//	host path = CPUStepOverhead + PerSeqOverhead × sequences
//	step      = max(GPU path, host path) × slowdown × (1 + jitter·N(0,1)) [+ cold start]
//
// compute = (2 × non-embedding params × tokens + 2 × vocab × hidden × logit
// rows + attention FLOPs) / TP / (peak × PrefillEfficiency); memory =
// (weights/TP + KV bytes read and written) / (bandwidth × DecodeEfficiency).
func (e *Engine) stepTime(p plan) time.Duration {
	r := e.r
	m, g := r.model, r.gpu
	tp := float64(r.cfg.TensorParallelSize)
	qDim := float64(m.QHeads * m.HeadDim)
	var flops, kvBytes float64
	logits, seqs, drafting := 0, len(p.items), 0
	for _, it := range p.items {
		n := float64(it.n)
		ctx := float64(it.start)
		flops += 4 * float64(m.Layers) * qDim * n * (ctx + n/2) // QK^T and PV
		kvBytes += (ctx + n) * r.kvBytesPerToken
		if it.start+it.n >= len(it.s.tokens) {
			logits += 1 + it.drafts
		}
		if it.drafts > 0 {
			drafting++
		}
	}
	flops += 2*m.NonEmbeddingParams*float64(p.tokens) + 2*float64(m.Vocab)*float64(m.Hidden)*float64(logits)
	flops /= tp
	compute := flops / (g.PeakFLOPS * g.PrefillEfficiency)
	targetWeights := m.Params * r.weightByte / tp
	memory := (targetWeights + kvBytes) / (g.MemBandwidth * g.DecodeEfficiency)
	gpu := g.StepOverhead + secs(math.Max(compute, memory)) + r.allReduce(p.tokens)
	host := g.CPUStepOverhead + time.Duration(seqs)*g.PerSeqOverhead
	if drafting > 0 {
		d, h := e.draftCost(drafting)
		gpu += d
		host += h
	}
	t := max(gpu, host)
	f := r.cfg.Slowdown
	if r.cfg.Jitter > 0 {
		f *= math.Max(0.2, 1+r.cfg.Jitter*e.jitter.NormFloat64())
	}
	t = time.Duration(float64(t) * f)
	if !e.warm {
		e.warm = true
		t += r.cfg.ColdStart
	}
	return t
}

// Draft proposal costs per step, as fractions of the target's fixed step
// overhead: a separate draft model runs k small forward passes; EAGLE/MTP/
// Medusa heads are about one layer; n-gram lookup is host work only.
const (
	draftModelLaunchFrac = 0.5
	draftHeadLaunchFrac  = 0.1
	ngramPerSeq          = 30 * time.Microsecond
)

// draftCost returns the (GPU, host) time of proposing k drafts for n sequences.
func (e *Engine) draftCost(n int) (gpu, host time.Duration) {
	r := e.r
	sc := r.spec
	k := float64(sc.NumSpeculativeTokens)
	bw := r.gpu.MemBandwidth * r.gpu.DecodeEfficiency
	switch sc.Method {
	case "ngram", "suffix":
		return 0, time.Duration(n) * ngramPerSeq
	case "draft_model":
		d := r.draft
		per := time.Duration(float64(r.gpu.StepOverhead)*draftModelLaunchFrac) + secs(d.Params*r.weightByte/bw)
		return time.Duration(k * float64(per)), 0
	default: // eagle, eagle3, medusa, mlp_speculator, mtp, deepseek_mtp: about one extra layer plus the LM head
		m := r.model
		headBytes := (m.NonEmbeddingParams/float64(m.Layers) + float64(m.Vocab*m.Hidden)) * r.weightByte
		per := time.Duration(float64(r.gpu.StepOverhead)*draftHeadLaunchFrac) + secs(headBytes/bw)
		return time.Duration(k * float64(per)), 0
	}
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
