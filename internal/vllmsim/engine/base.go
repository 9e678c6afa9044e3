package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/clock"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/kvcache"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/metrics"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/spec"
)

// Core is what an API server needs of an engine core. Two engines
// implement it: Engine (continuous batching with the timing model) and
// Fixed (exact --sim-fixed-ttft/--sim-fixed-itl timing); Start picks one.
type Core interface {
	// Check applies the checks Submit makes to req, without submitting it.
	Check(req Request) error
	// Submit queues req and returns the channel its outputs arrive on.
	Submit(ctx context.Context, req Request) (<-chan Output, error)
	// Close stops the engine; in-flight requests end with ErrEngineClosed.
	Close()
	// Kill simulates the engine core's death; in-flight requests end with
	// ErrEngineDead.
	Kill()
	// Healthy reports whether the engine accepts requests.
	Healthy() bool
	// Info describes the effective configuration and the KV cache.
	Info() Info
}

// Start validates cfg, registers the engine's metrics on reg (nil: not
// registered) and starts the engine cfg asks for: Fixed when FixedTTFT and
// FixedITL are set, else Engine.
func Start(cfg Config, reg prometheus.Registerer) (Core, error) {
	if cfg.fixedTiming() {
		return NewFixed(cfg, reg)
	}
	return New(cfg, reg)
}

// Info describes a running engine: the effective configuration and what the
// engine derived from it.
type Info struct {
	Config          Config // derived sizes filled in
	GPU             presets.GPUPreset
	Model           presets.ModelPreset // the shape simulated
	ModelNote       string              // set when Config.Model has no preset and the default shape is used
	GPUPresets      []string
	ModelPresets    []string
	NumGPUBlocks    int
	NumCPUBlocks    int
	BlockSize       int
	KVBytesPerToken int   // per GPU
	KVCacheTokens   int   // NumGPUBlocks × BlockSize
	WeightBytes     int64 // per GPU
	// KVCacheBytes is the memory per GPU left for the KV cache after the
	// weights and the activations: vLLM's "Available KV cache memory".
	KVCacheBytes int64
	CacheDtype   string
	EOSTokenID   int32
	VocabSize    int
	Speculative  *spec.Config // nil when off
	ModelName    string       // the model_name metric label
}

// admission is the bookkeeping the two engines do differently: which
// requests they have taken from the waiting queue, and the KV cache.
type admission interface {
	// admitted are the requests taken from the waiting queue (running).
	admitted() []*seq
	// drop takes s out of the admitted requests, if it is there.
	drop(s *seq)
	// release frees what s holds (its KV blocks).
	release(s *seq)
	// kvUsage is the kv_cache_usage_perc gauge's value.
	kvUsage() float64
	// inFrontend are the requests not yet handed to the engine core.
	inFrontend() []*seq
}

// The engine's life.
const (
	stateAlive = iota
	stateClosed
	stateDead
)

// requestStream is the PCG stream of the per-request generator (seeded by
// Config.Seed): its output tokens, EOS and acceptance draws. A constant
// apart from jitterStream, so the two never share a sequence.
const requestStream = 0x517cc1b727220a95

// base is what both engines share: configuration, metrics, the waiting
// queue, request life (submit, emit, finish, abort) and shutdown. Every
// field below mu is guarded by it.
type base struct {
	r     *resolved
	clock clock.Clock
	m     *metrics.Set
	pace  clock.Pace // the real-time loop's account
	lora  *loraInfo  // vllm:lora_requests_info; nil without LoRA
	adm   admission

	mu       sync.Mutex
	waiting  []*seq
	state    int // stateAlive, stateClosed, stateDead
	stepHook func(running, waiting int)
	// intake takes a submitted request (under mu); nil: straight into the
	// waiting queue. Engine puts requests through its front end first.
	intake func(s *seq)

	wake chan struct{} // a request arrived or left
	stop chan struct{} // closed by Close and Kill
	done chan struct{} // closed when the loop has returned
}

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
	// committed counts the leading blocks whose hashes the prefix cache
	// has been offered (kvcache.Pool.Commit), as vLLM's num_cached_block.
	committed   int
	cachedHit   int  // prompt tokens served by the prefix cache on first scheduling
	encoded     bool // the vision encoder ran on its images (vision.go)
	generated   int
	scheduled   bool // scheduled at least once
	done        bool
	preemptions int

	// arrival: the API server received it; readyAt: the front end is done
	// with it; queued: it entered the engine's waiting queue.
	arrival, readyAt, queued time.Time
	// fe is its progress through the front end.
	fe                                    feState
	firstScheduled, firstToken, lastToken time.Time

	sink func(Output)

	// Fixed's scheduling
	nextAt   time.Time
	heapIdx  int
	slotWait bool // found every max_num_seqs slot taken
}

// init validates cfg and registers the metrics on reg (nil: not
// registered).
func (b *base) init(cfg Config, reg prometheus.Registerer) error {
	r, err := resolve(cfg)
	if err != nil {
		return fmt.Errorf("vllm engine config: %w", err)
	}
	m, err := metrics.New(r.metricsSetup(), reg)
	if err != nil {
		return err
	}
	b.r, b.m, b.clock = r, m, r.cfg.Clock
	b.pace = clock.Pace{Modelled: m.Modelled, Lost: m.Lost, Ratio: m.BehindRatio}
	if m.LoRA != nil {
		b.lora = &loraInfo{vec: m.LoRA, maxLoRAs: strconv.Itoa(r.cfg.maxLoRAs())}
	}
	if b.clock == nil {
		b.clock = clock.Real{}
	}
	b.wake = make(chan struct{}, 1)
	b.stop = make(chan struct{})
	b.done = make(chan struct{})
	return nil
}

// Info describes the engine's effective configuration and KV cache.
func (b *base) Info() Info {
	r := b.r
	cfg := r.cfg
	cfg.Clock = nil
	var sc *spec.Config
	if r.spec != nil {
		s := *r.spec
		sc = &s
	}
	return Info{
		Config: cfg, GPU: r.gpu, Model: r.model, ModelNote: r.modelNote,
		GPUPresets: presets.GPUPresetNames(), ModelPresets: presets.ModelPresetNames(),
		NumGPUBlocks: r.numGPUBlocks, BlockSize: cfg.BlockSize,
		KVBytesPerToken: int(r.kvBytesPerToken), KVCacheTokens: r.numGPUBlocks * cfg.BlockSize,
		WeightBytes: int64(r.weightBytes), KVCacheBytes: int64(r.memAvail), CacheDtype: r.cacheDtype,
		EOSTokenID: r.model.EOSTokenID, VocabSize: r.model.Vocab,
		Speculative: sc, ModelName: cfg.ModelName(),
	}
}

// Healthy reports whether the engine accepts requests (false after Kill or Close).
func (b *base) Healthy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state == stateAlive
}

// Close stops the engine loop. Requests still in flight get a final Output
// with Err = ErrEngineClosed (counted as finished_reason "abort") and their
// channels closed. Close waits for the loop to stop and may be called twice.
func (b *base) Close() { b.shutdown(stateClosed) }

// Kill simulates the death of the engine core: in-flight requests fail with
// ErrEngineDead (finished_reason "error"), Healthy turns false and later
// Submits return ErrEngineDead.
func (b *base) Kill() { b.shutdown(stateDead) }

func (b *base) shutdown(to int) {
	b.mu.Lock()
	if b.state == stateAlive {
		b.state = to
		close(b.stop)
	}
	b.mu.Unlock()
	<-b.done
}

// stopping ends every request when the loop sees the engine stopped (under
// mu) and reports whether it did.
func (b *base) stopping() bool {
	if b.state == stateAlive {
		return false
	}
	err, reason := ErrEngineClosed, "abort"
	if b.state == stateDead {
		err, reason = ErrEngineDead, "error"
	}
	all := append(append(slices.Clone(b.adm.admitted()), b.waiting...), b.adm.inFrontend()...)
	for _, s := range all {
		b.remove(s)
		b.finish(s, reason, b.clock.Now(), Output{Finished: true, FinishReason: reason, Err: err})
	}
	b.updateGauges()
	return true
}

// Check applies vLLM's request checks (prompt length and context, max_tokens
// and min_tokens, token ids) to req without submitting it: a *RequestError
// with vLLM's message, or nil.
func (b *base) Check(req Request) error {
	return checkRequest(&req, b.r.cfg.MaxModelLen, b.r.model.Vocab)
}

// Submit queues req and returns the channel its outputs arrive on; read it
// until it closes, or cancel ctx. Cancelling ctx aborts the request
// (finished_reason "abort") and closes the channel. A request the engine
// cannot serve returns a *RequestError (400) with vLLM's message.
func (b *base) Submit(ctx context.Context, req Request) (<-chan Output, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ch := make(chan Output)
	ob := newOutbox(ctx, ch)
	s, err := b.submit(req, ob.push)
	if err != nil {
		return nil, err
	}
	if ctx.Done() != nil {
		ob.stopAbort = context.AfterFunc(ctx, func() { b.abort(s) })
	}
	go ob.run()
	return ch, nil
}

// submit checks and enqueues a request whose outputs go to sink (called
// under mu, must not block).
func (b *base) submit(req Request, sink func(Output)) (*seq, error) {
	if err := checkRequest(&req, b.r.cfg.MaxModelLen, b.r.model.Vocab); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case stateDead:
		return nil, ErrEngineDead
	case stateClosed:
		return nil, ErrEngineClosed
	}
	if req.Arrival.IsZero() {
		req.Arrival = b.clock.Now()
	}
	toks := make([]int32, len(req.PromptTokens), len(req.PromptTokens)+req.MaxTokens)
	copy(toks, req.PromptTokens)
	s := &seq{
		req: req, tokens: toks, promptLen: len(toks), maxTokens: req.MaxTokens,
		rng:     rand.New(rand.NewPCG(requestSeed(req, b.r.cfg.Seed), hashTokens(toks))),
		arrival: req.Arrival, sink: sink, heapIdx: -1,
	}
	if b.intake != nil {
		b.intake(s)
	} else {
		s.readyAt, s.queued = s.arrival, s.arrival
		b.waiting = append(b.waiting, s)
	}
	b.updateGauges()
	b.signal()
	return s, nil
}

// hashTokens seeds a request's generator from its prompt, so that the same
// prompt and Config.Seed give the same output.
func hashTokens(t []int32) uint64 { return kvcache.FNVTokens(requestStream, t) }

// greedySeed stands for the served model's weights in a greedy request's
// generator: with it, the output depends on the prompt alone.
const greedySeed = 0x9e3779b97f4a7c15

// requestSeed is the first seed of a request's generator: the server's
// Config.Seed for a sampled request, greedySeed for a greedy one (vLLM's
// greedy decoding gives one answer to one prompt, whichever start serves
// it; only a sampled output changes with the server's seed).
func requestSeed(req Request, seed int64) uint64 {
	if req.Greedy {
		return greedySeed
	}
	return uint64(seed)
}

// signal wakes the loop.
func (b *base) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// abort ends a request whose context was cancelled.
func (b *base) abort(s *seq) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.done {
		return
	}
	b.remove(s)
	b.finish(s, "abort", b.clock.Now(), Output{Finished: true, FinishReason: "abort"})
	b.updateGauges()
	b.signal()
}

// remove takes s out of the waiting queue and the admitted requests.
func (b *base) remove(s *seq) {
	if i := slices.Index(b.waiting, s); i >= 0 {
		b.waiting = slices.Delete(b.waiting, i, i+1)
	}
	b.adm.drop(s)
}

// finish records a finished request (under mu), frees what it holds and
// sends its last output. The caller has removed it from the queues.
func (b *base) finish(s *seq, reason string, now time.Time, last Output) {
	if s.done {
		return
	}
	s.done = true
	b.adm.release(s)
	b.m.FinishedRequest(reason, metrics.Finished{
		Arrival: s.arrival, Queued: s.queued, FirstScheduled: s.firstScheduled, FirstToken: s.firstToken, End: now,
		PromptLen: s.promptLen, Generated: s.generated, MaxTokens: s.maxTokens, Preemptions: s.preemptions, Guided: s.req.Guided,
	})
	s.sink(last)
}

// emit appends n newly generated tokens to s and sends them (under mu).
// It returns the finish reason if the request ended.
func (b *base) emit(s *seq, n int, now time.Time) string {
	if s.req.Pooling {
		return b.pooled(s, now)
	}
	out := Output{Tokens: make([]int32, 0, n)}
	reason := ""
	for i := 0; i < n && reason == ""; i++ {
		var tok int32
		tok, reason = b.sample(s)
		s.tokens = append(s.tokens, tok)
		out.Tokens = append(out.Tokens, tok)
	}
	m := b.m
	m.GenerationTokens.Add(float64(len(out.Tokens)))
	if s.firstToken.IsZero() {
		s.firstToken = now
		out.CachedPromptTokens = s.cachedHit
		m.PromptTokens.Add(float64(s.promptLen))
		m.PromptTokensCached.Add(float64(s.cachedHit))
		m.TTFT.Observe(max(0, now.Sub(s.arrival).Seconds()))
	} else {
		m.TokenGap(max(0, now.Sub(s.lastToken).Seconds()), len(out.Tokens))
	}
	s.lastToken = now
	if reason != "" {
		out.Finished, out.FinishReason = true, reason
		b.remove(s)
		b.finish(s, reason, now, out)
		return reason
	}
	s.sink(out)
	return ""
}

// sample draws s's next token: a seeded id other than EOS, or EOS with
// probability EOSProbability once MinTokens are out (unless IgnoreEOS). It
// returns "stop" or "length" when the token ends the request.
func (b *base) sample(s *seq) (int32, string) {
	model, cfg := b.r.model, &b.r.cfg
	s.generated++
	tok := int32(s.rng.IntN(model.Vocab))
	if tok == model.EOSTokenID {
		tok = (tok + 1) % int32(model.Vocab)
	}
	if s.req.Guided && s.generated > s.req.StopAfter && s.generated <= s.maxTokens {
		return model.EOSTokenID, "stop" // the grammar is complete
	}
	if !s.req.Guided && !s.req.IgnoreEOS && cfg.EOSProbability > 0 && s.generated > s.req.MinTokens && s.rng.Float64() < cfg.EOSProbability {
		return model.EOSTokenID, "stop"
	}
	if s.generated >= s.maxTokens {
		return tok, "length"
	}
	return tok, ""
}

// updateGauges sets the gauges from the current state (under mu).
func (b *base) updateGauges() {
	running, waiting := len(b.adm.admitted()), len(b.waiting)
	b.m.Gauges(running, waiting, b.adm.kvUsage())
	b.lora.set(b.adm.admitted(), b.waiting, b.clock.Now())
	if b.stepHook != nil {
		b.stepHook(running, waiting)
	}
}

// idle waits for a request to arrive or the engine to stop.
func (b *base) idle() {
	select {
	case <-b.wake:
	case <-b.stop:
	}
}
