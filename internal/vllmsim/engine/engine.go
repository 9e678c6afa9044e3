package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Engine is a simulated vLLM V1 engine core: one goroutine runs the
// scheduler loop; Submit adds requests; outputs stream on per-request channels.
type Engine struct {
	r     *resolved
	clock Clock
	m     *metrics
	name  string

	mu       sync.Mutex
	pool     *blockPool
	waiting  []*seq
	running  []*seq
	state    int // stateAlive, stateClosed, stateDead
	warm     bool
	jitter   *rand.Rand
	fixedQ   fixedHeap
	maxSeen  int // most requests ever running at once (tests)
	stepHook func(running, waiting int)

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

const (
	stateAlive = iota
	stateClosed
	stateDead
)

// seq is one request inside the engine.
type seq struct {
	req       Request
	tokens    []int32 // prompt then generated
	promptLen int
	maxTokens int
	rng       *rand.Rand

	numComputed int // tokens whose KV is in the cache
	blocks      []int
	hashes      []uint64
	cachedHit   int // prompt tokens served by the prefix cache on first scheduling
	generated   int
	scheduled   bool // scheduled at least once
	done        bool
	preemptions int

	arrival, firstScheduled, firstToken, lastToken time.Time

	sink func(Output)

	// fixed-timing mode
	nextAt   time.Time
	heapIdx  int
	slotWait bool // found every max_num_seqs slot taken
}

// New validates cfg (after Defaults), registers the engine's metrics on reg
// (nil: not registered) and starts the engine loop.
func New(cfg Config, reg prometheus.Registerer) (*Engine, error) {
	e, err := build(cfg, reg)
	if err != nil {
		return nil, err
	}
	if e.fixedMode() {
		go e.loopFixed()
	} else {
		go e.loop()
	}
	return e, nil
}

// build makes an engine without starting its loop.
func build(cfg Config, reg prometheus.Registerer) (*Engine, error) {
	r, err := resolve(cfg)
	if err != nil {
		return nil, fmt.Errorf("vllm engine config: %w", err)
	}
	name := r.cfg.Model
	if len(r.cfg.ServedModelNames) > 0 && r.cfg.ServedModelNames[0] != "" {
		name = r.cfg.ServedModelNames[0]
	}
	m, err := newMetrics(r, name, reg)
	if err != nil {
		return nil, err
	}
	clock := r.cfg.Clock
	if clock == nil {
		clock = realClock{}
	}
	seed := uint64(r.cfg.Seed)
	e := &Engine{
		r: r, clock: clock, m: m, name: name,
		pool:   newBlockPool(r.numGPUBlocks, r.cfg.BlockSize, r.cfg.EnablePrefixCaching),
		jitter: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		warm:   r.cfg.ColdStart == 0,
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	e.updateGauges()
	return e, nil
}

func (e *Engine) fixedMode() bool { return e.r.cfg.FixedTTFT > 0 && e.r.cfg.FixedITL > 0 }

// Info describes the engine's effective configuration and KV cache.
func (e *Engine) Info() Info {
	r := e.r
	cfg := r.cfg
	cfg.Clock = nil
	var spec *SpecConfig
	if r.spec != nil {
		s := *r.spec
		spec = &s
	}
	return Info{
		Config: cfg, GPU: r.gpu, Model: r.model, ModelNote: r.modelNote,
		GPUPresets: GPUPresetNames(), ModelPresets: ModelPresetNames(),
		NumGPUBlocks: r.numGPUBlocks, BlockSize: cfg.BlockSize,
		KVBytesPerToken: int(r.kvBytesPerToken), KVCacheTokens: r.numGPUBlocks * cfg.BlockSize,
		WeightBytes: int64(r.weightBytes), CacheDtype: r.cacheDtype,
		EOSTokenID: r.model.EOSTokenID, VocabSize: r.model.Vocab,
		Speculative: spec, ModelName: e.name,
	}
}

// Healthy reports whether the engine accepts requests (false after Kill or Close).
func (e *Engine) Healthy() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.state == stateAlive
}

// Close stops the engine loop. Requests still in flight get a final Output
// with Err = ErrEngineClosed (counted as finished_reason "abort") and their
// channels closed. Close waits for the loop to stop and may be called twice.
func (e *Engine) Close() { e.shutdown(stateClosed) }

// Kill simulates the death of the engine core: in-flight requests fail with
// ErrEngineDead (finished_reason "error"), Healthy turns false and later
// Submits return ErrEngineDead.
func (e *Engine) Kill() { e.shutdown(stateDead) }

func (e *Engine) shutdown(to int) {
	e.mu.Lock()
	if e.state == stateAlive {
		e.state = to
		close(e.stop)
	}
	e.mu.Unlock()
	<-e.done
}

// failAll ends every request (under e.mu) when the engine stops.
func (e *Engine) failAll() {
	err, reason := ErrEngineClosed, "abort"
	if e.state == stateDead {
		err, reason = ErrEngineDead, "error"
	}
	all := append(append([]*seq{}, e.running...), e.waiting...)
	all = append(all, e.fixedQ...)
	for _, s := range all {
		e.finish(s, reason, e.clock.Now(), Output{Finished: true, FinishReason: reason, Err: err})
	}
	e.running, e.waiting, e.fixedQ = nil, nil, nil
	e.updateGauges()
}

// Submit queues req and returns the channel its outputs arrive on; read it
// until it closes, or cancel ctx. Cancelling ctx aborts the request
// (finished_reason "abort") and closes the channel. A request the engine
// cannot serve returns a *RequestError (400) with vLLM's message.
func (e *Engine) Submit(ctx context.Context, req Request) (<-chan Output, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ch := make(chan Output)
	ob := newOutbox(ctx, ch)
	s, err := e.submit(req, ob.push)
	if err != nil {
		return nil, err
	}
	if ctx.Done() != nil {
		ob.stopAbort = context.AfterFunc(ctx, func() { e.abort(s) })
	}
	go ob.run()
	return ch, nil
}

func (e *Engine) validate(req *Request) error {
	r := e.r
	n := len(req.PromptTokens)
	maxLen := r.cfg.MaxModelLen
	if n == 0 {
		return &RequestError{Status: 400, Message: "The decoder prompt cannot be empty"}
	}
	// vLLM's serving_engine._validate_input, word for word.
	if req.MaxTokens < 0 {
		return &RequestError{Status: 400, Message: fmt.Sprintf("max_tokens must be at least 1, got %d.", req.MaxTokens)}
	}
	if req.MaxTokens == 0 { // max_tokens absent
		if n >= maxLen {
			return &RequestError{Status: 400, Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens in the messages, Please reduce the length of the messages.", maxLen, n)}
		}
		req.MaxTokens = maxLen - n // vLLM's default
	}
	if n+req.MaxTokens > maxLen {
		return &RequestError{Status: 400, Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.", maxLen, n+req.MaxTokens, n, req.MaxTokens)}
	}
	if req.MinTokens < 0 || req.MinTokens > req.MaxTokens {
		return &RequestError{Status: 400, Message: fmt.Sprintf("min_tokens must be between 0 and max_tokens=%d, got %d.", req.MaxTokens, req.MinTokens)}
	}
	for _, t := range req.PromptTokens {
		if t < 0 || int(t) >= r.model.Vocab {
			return &RequestError{Status: 400, Message: fmt.Sprintf("Token id %d is out of vocabulary (vocab size %d)", t, r.model.Vocab)}
		}
	}
	return nil
}

// submit validates and enqueues a request whose outputs go to sink (called
// under e.mu, must not block).
func (e *Engine) submit(req Request, sink func(Output)) (*seq, error) {
	if err := e.validate(&req); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch e.state {
	case stateDead:
		return nil, ErrEngineDead
	case stateClosed:
		return nil, ErrEngineClosed
	}
	if req.Arrival.IsZero() {
		req.Arrival = e.clock.Now()
	}
	toks := make([]int32, len(req.PromptTokens), len(req.PromptTokens)+req.MaxTokens)
	copy(toks, req.PromptTokens)
	s := &seq{
		req: req, tokens: toks, promptLen: len(toks), maxTokens: req.MaxTokens,
		rng:     rand.New(rand.NewPCG(uint64(e.r.cfg.Seed), hashTokens(toks))),
		arrival: req.Arrival, sink: sink, heapIdx: -1,
	}
	e.waiting = append(e.waiting, s)
	e.updateGauges()
	e.signal()
	return s, nil
}

func hashTokens(t []int32) uint64 { return blockHash(0x51_7c_c1_b7_27_22_0a_95, t) }

func (e *Engine) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// abort ends a request whose context was cancelled.
func (e *Engine) abort(s *seq) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.done {
		return
	}
	e.remove(s)
	e.finish(s, "abort", e.clock.Now(), Output{Finished: true, FinishReason: "abort"})
	e.updateGauges()
	e.signal()
}

// remove takes s out of the waiting, running and fixed queues.
func (e *Engine) remove(s *seq) {
	del := func(q []*seq) []*seq {
		for i, x := range q {
			if x == s {
				return append(q[:i], q[i+1:]...)
			}
		}
		return q
	}
	e.waiting = del(e.waiting)
	e.running = del(e.running)
	if s.heapIdx >= 0 {
		heap.Remove(&e.fixedQ, s.heapIdx)
	}
}

// finish records a finished request (under e.mu), frees its blocks and sends
// its last output. The caller has removed it from the queues.
func (e *Engine) finish(s *seq, reason string, now time.Time, last Output) {
	if s.done {
		return
	}
	s.done = true
	e.pool.free(s.blocks)
	s.blocks = nil
	e.m.success[reason].Inc()
	if reason == "stop" || reason == "length" {
		m := e.m
		sec := func(d time.Duration) float64 { return max(0, d.Seconds()) }
		m.e2e.Observe(sec(now.Sub(s.arrival)))
		m.queue.Observe(sec(s.firstScheduled.Sub(s.arrival)))
		m.inference.Observe(sec(now.Sub(s.firstScheduled)))
		m.prefill.Observe(sec(s.firstToken.Sub(s.firstScheduled)))
		m.decode.Observe(sec(now.Sub(s.firstToken)))
		if s.generated > 1 {
			m.tpot.Observe(sec(now.Sub(s.firstToken)) / float64(s.generated-1))
		}
		m.reqPrompt.Observe(float64(s.promptLen))
		m.reqGen.Observe(float64(s.generated))
		m.reqMaxTokens.Observe(float64(s.maxTokens))
	}
	s.sink(last)
}

// emit appends newly generated tokens to s and sends them (under e.mu).
// It returns the finish reason if the request ended.
func (e *Engine) emit(s *seq, n int, now time.Time) string {
	cfg := &e.r.cfg
	out := Output{Tokens: make([]int32, 0, n)}
	reason := ""
	for i := 0; i < n && reason == ""; i++ {
		s.generated++
		tok := int32(s.rng.IntN(e.r.model.Vocab))
		if tok == e.r.model.EOSTokenID {
			tok = (tok + 1) % int32(e.r.model.Vocab)
		}
		if !s.req.IgnoreEOS && cfg.EOSProbability > 0 && s.generated > s.req.MinTokens && s.rng.Float64() < cfg.EOSProbability {
			tok, reason = e.r.model.EOSTokenID, "stop"
		}
		if reason == "" && s.generated >= s.maxTokens {
			reason = "length"
		}
		s.tokens = append(s.tokens, tok)
		out.Tokens = append(out.Tokens, tok)
	}
	m := e.m
	m.generationTokens.Add(float64(len(out.Tokens)))
	if s.firstToken.IsZero() {
		s.firstToken = now
		out.CachedPromptTokens = s.cachedHit
		m.promptTokens.Add(float64(s.promptLen))
		m.promptTokensCached.Add(float64(s.cachedHit))
		m.ttft.Observe(max(0, now.Sub(s.arrival).Seconds()))
	} else {
		m.itl.Observe(max(0, now.Sub(s.lastToken).Seconds()))
	}
	s.lastToken = now
	if reason != "" {
		out.Finished, out.FinishReason = true, reason
		e.remove(s)
		e.finish(s, reason, now, out)
		return reason
	}
	s.sink(out)
	return ""
}

// updateGauges sets the gauges from the current state (under e.mu).
func (e *Engine) updateGauges() {
	running, waiting := len(e.running), len(e.waiting)
	usage := e.pool.usage()
	if e.fixedMode() {
		running = len(e.fixedQ)
		blocks := 0
		for _, s := range e.fixedQ {
			blocks += (len(s.tokens) + e.r.cfg.BlockSize - 1) / e.r.cfg.BlockSize
		}
		usage = math.Min(1, float64(blocks)/float64(e.r.numGPUBlocks))
	}
	e.maxSeen = max(e.maxSeen, running)
	e.m.running.Set(float64(running))
	e.m.waiting.Set(float64(waiting))
	e.m.waitingCapacity.Set(float64(waiting))
	e.m.waitingDeferred.Set(0)
	e.m.kvUsage.Set(usage)
	if e.stepHook != nil {
		e.stepHook(running, waiting)
	}
}

// waitUntil blocks until the clock reaches t or the engine stops; it
// reports false if the engine stopped.
func (e *Engine) waitUntil(t time.Time) bool {
	return e.sleep(t, nil) != wokeStop
}

const (
	wokeDeadline = iota
	wokeSignal
	wokeStop
)

// spinWindow is how early a real-time wait wakes from its timer to spin
// (yielding) to the deadline: Go timers on Linux can fire up to ~1–2 ms
// late when the process is idle (golang/go#44343), too coarse for
// --sim-fixed-ttft/--sim-fixed-itl precision.
const spinWindow = 1500 * time.Microsecond

// sleep waits for t, for a signal on wake (if non-nil), or for the engine
// to stop, and says which came first.
func (e *Engine) sleep(t time.Time, wake <-chan struct{}) int {
	if _, real := e.clock.(realClock); real {
		if d := time.Until(t) - spinWindow; d > 0 {
			tm := time.NewTimer(d)
			select {
			case <-tm.C:
			case <-wake:
				tm.Stop()
				return wokeSignal
			case <-e.stop:
				tm.Stop()
				return wokeStop
			}
		}
		for time.Now().Before(t) {
			select {
			case <-e.stop:
				return wokeStop
			default:
			}
			runtime.Gosched()
		}
		return wokeDeadline
	}
	fire := make(chan struct{})
	stopTimer := e.clock.AfterFunc(t, func() { close(fire) })
	select {
	case <-fire:
		return wokeDeadline
	case <-wake:
		stopTimer()
		return wokeSignal
	case <-e.stop:
		stopTimer()
		return wokeStop
	}
}

// loop is the continuous-batching engine loop: schedule a step, wait its
// simulated duration (against absolute deadlines, so steps do not drift),
// apply it, repeat.
func (e *Engine) loop() {
	defer close(e.done)
	var next time.Time // when the previous step ended, if the engine was busy
	for {
		e.mu.Lock()
		if e.state != stateAlive {
			e.failAll()
			e.mu.Unlock()
			return
		}
		p := e.schedule()
		if len(p.items) == 0 {
			e.mu.Unlock()
			if p.preempted {
				continue
			}
			next = time.Time{}
			select {
			case <-e.wake:
			case <-e.stop:
			}
			continue
		}
		dur := e.stepTime(p)
		e.mu.Unlock()

		now := e.clock.Now()
		start := now
		// Keep back-to-back steps on the schedule the timing model gives, unless
		// the loop fell well behind (then restart from now instead of bursting).
		if !next.IsZero() && !next.After(now) && now.Sub(next) < 2*time.Millisecond {
			start = next
		}
		end := start.Add(dur)
		if !e.waitUntil(end) {
			continue
		}
		e.mu.Lock()
		e.apply(p, end)
		e.mu.Unlock()
		next = end
	}
}

// ---- fixed-timing mode ----

type fixedHeap []*seq

func (h fixedHeap) Len() int           { return len(h) }
func (h fixedHeap) Less(i, j int) bool { return h[i].nextAt.Before(h[j].nextAt) }
func (h fixedHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx, h[j].heapIdx = i, j
}
func (h *fixedHeap) Push(x any) { s := x.(*seq); s.heapIdx = len(*h); *h = append(*h, s) }
func (h *fixedHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	*h = old[:len(old)-1]
	s.heapIdx = -1
	return s
}

// loopFixed serves --sim-fixed-ttft/--sim-fixed-itl: each request's first
// token comes exactly FixedTTFT after it starts (its arrival, or when a
// max_num_seqs slot frees), then one token every FixedITL, each scheduled
// against an absolute deadline. The roofline, KV blocks and prefix cache are
// bypassed (kv_cache_usage_perc reports the blocks the tokens would use).
func (e *Engine) loopFixed() {
	defer close(e.done)
	cfg := e.r.cfg
	for {
		e.mu.Lock()
		if e.state != stateAlive {
			e.failAll()
			e.mu.Unlock()
			return
		}
		now := e.clock.Now()
		for len(e.waiting) > 0 && len(e.fixedQ) < cfg.MaxNumSeqs {
			s := e.waiting[0]
			e.waiting = e.waiting[1:]
			start := s.arrival
			if s.slotWait && now.After(start) {
				start = now // it waited for a max_num_seqs slot
			}
			s.scheduled, s.firstScheduled = true, start
			s.nextAt = start.Add(cfg.FixedTTFT)
			heap.Push(&e.fixedQ, s)
		}
		for _, s := range e.waiting {
			s.slotWait = true
		}
		for len(e.fixedQ) > 0 && !e.fixedQ[0].nextAt.After(now) {
			s := e.fixedQ[0]
			at := s.nextAt
			if e.emit(s, 1, at) == "" {
				s.nextAt = at.Add(cfg.FixedITL)
				heap.Fix(&e.fixedQ, s.heapIdx)
			}
			e.m.iterTokens.Observe(1)
		}
		e.updateGauges()
		var wakeAt time.Time
		if len(e.fixedQ) > 0 {
			wakeAt = e.fixedQ[0].nextAt
		}
		e.mu.Unlock()
		if wakeAt.IsZero() {
			select {
			case <-e.wake:
			case <-e.stop:
			}
			continue
		}
		e.sleep(wakeAt, e.wake)
	}
}

// ---- output delivery ----

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

var errNeverFits = errors.New("request cannot be scheduled: it needs more KV cache blocks than the engine has")
