package engine

import (
	"errors"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/clock"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/kvcache"
)

// Engine is the simulated vLLM V1 engine core: continuous batching with a
// per-step token budget, KV-cache blocks with prefix caching and
// preemption, and the roofline timing model. One goroutine runs the
// scheduler loop; Submit adds requests; outputs stream on per-request
// channels.
type Engine struct {
	base

	// Guarded by base.mu.
	pool    *kvcache.Pool
	running []*seq
	warm    bool // the first step (which pays ColdStart) has run
	jitter  *rand.Rand
	fe      *frontend
	// drift is the slow part of the step-time noise (stepNoise), last
	// updated at driftAt.
	drift   float64
	driftAt time.Time
	// observer, when set, sees every step (steps.go).
	observer *func(Step)
}

// jitterStream is the PCG stream of the step-time noise generator (seeded
// by Config.Seed): 2^64 divided by the golden ratio, a constant apart from
// requestStream.
const jitterStream = 0x9e3779b97f4a7c15

// errFixedTiming refuses a fixed-timing configuration in New.
var errFixedTiming = errors.New("vllm engine config: --sim-fixed-ttft and --sim-fixed-itl run on the fixed-timing engine: use Start or NewFixed")

// New validates cfg, registers the engine's metrics on reg (nil: not
// registered) and starts the continuous-batching engine. A configuration
// with FixedTTFT and FixedITL is for NewFixed (Start picks).
func New(cfg Config, reg prometheus.Registerer) (*Engine, error) {
	e, err := build(cfg, reg)
	if err != nil {
		return nil, err
	}
	go e.loop()
	return e, nil
}

// build makes an engine without starting its loop.
func build(cfg Config, reg prometheus.Registerer) (*Engine, error) {
	if cfg.fixedTiming() {
		return nil, errFixedTiming
	}
	e := &Engine{}
	if err := e.init(cfg, reg); err != nil {
		return nil, err
	}
	r := e.r
	e.pool = kvcache.NewPool(r.numGPUBlocks, r.cfg.BlockSize, r.cfg.EnablePrefixCaching)
	e.jitter = rand.New(rand.NewPCG(uint64(r.cfg.Seed), jitterStream))
	e.warm = r.cfg.ColdStart == 0
	e.adm = e
	fp := r.gpu.Frontend.ForRelease(r.cfg.release())
	if r.cfg.slowDetokenizer() && fp.SlowDetokenizeFactor > 0 {
		fp.PerOutputToken = time.Duration(float64(fp.PerOutputToken) * fp.SlowDetokenizeFactor)
	}
	e.fe = newFrontend(fp, r.cfg.APIServerCount, r.cfg.Jitter, r.cfg.Seed)
	if e.fe.active() && !r.cfg.Offline {
		e.fe.on = true
		e.intake = e.fe.admit
	}
	e.updateGauges()
	return e, nil
}

func (e *Engine) admitted() []*seq   { return e.running }
func (e *Engine) kvUsage() float64   { return e.pool.Usage() }
func (e *Engine) inFrontend() []*seq { return e.fe.reqs }

func (e *Engine) drop(s *seq) {
	if i := slices.Index(e.running, s); i >= 0 {
		e.running = slices.Delete(e.running, i, i+1)
	}
	e.fe.drop(s)
}

// handOver moves the requests the front end is done with by now into the
// waiting queue (under e.mu); each is queued from the moment it was ready.
func (e *Engine) handOver(now time.Time) {
	for _, s := range e.fe.ready(now) {
		s.queued = s.readyAt
		e.waiting = append(e.waiting, s)
	}
}

func (e *Engine) release(s *seq) {
	e.pool.Free(s.blocks)
	s.blocks = nil
}

// loop is the continuous-batching engine loop: schedule a step, wait its
// simulated duration (against absolute deadlines, so steps do not drift),
// apply it, repeat.
func (e *Engine) loop() {
	defer close(e.done)
	var next time.Time // when the previous step ended, if the engine was busy
	for {
		e.mu.Lock()
		if e.stopping() {
			e.mu.Unlock()
			return
		}
		p := e.schedule()
		if len(p.items) == 0 {
			ready := e.fe.nextReady()
			e.mu.Unlock()
			if !p.preempted {
				next = time.Time{}
				if ready.IsZero() {
					e.pace.Close(e.clock.Now())
					e.idle()
				} else if clock.WaitUntil(e.clock, ready, e.wake, e.stop) == clock.Deadline {
					// A request leaves the front end at ready in the model: a
					// step it joins starts there, as a back-to-back step does.
					next = ready
				}
			}
			continue
		}
		dur := e.stepTime(p)
		e.mu.Unlock()

		// Keep back-to-back steps on the schedule the timing model gives, unless
		// the loop fell well behind (then restart from now instead of bursting,
		// and count the time lost: pace).
		start := e.pace.Start(next, e.clock.Now())
		e.pace.Ran(dur)
		end := start.Add(dur)
		if clock.WaitUntil(e.clock, end, nil, e.stop) == clock.Stop {
			continue
		}
		e.mu.Lock()
		e.apply(p, end)
		e.observe(p, start, end)
		e.mu.Unlock()
		next = end
	}
}
