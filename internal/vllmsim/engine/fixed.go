package engine

import (
	"container/heap"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/clock"
)

// Fixed is the fixed-timing engine (--sim-fixed-ttft, --sim-fixed-itl):
// each request's first token comes exactly FixedTTFT after it starts (its
// arrival, or when a max_num_seqs slot frees), then one token every
// FixedITL, each against an absolute deadline kept in a heap. The
// roofline, KV blocks and prefix cache are bypassed (kv_cache_usage_perc
// reports the blocks the tokens would use); speculative decoding and
// ColdStart do not apply.
type Fixed struct {
	base
	q fixedHeap // admitted requests by next deadline; guarded by base.mu
}

// errNotFixed refuses a configuration without fixed timing in NewFixed.
var errNotFixed = errors.New("vllm engine config: the fixed-timing engine needs --sim-fixed-ttft and --sim-fixed-itl: use Start or New")

// NewFixed validates cfg, registers the engine's metrics on reg (nil: not
// registered) and starts the fixed-timing engine. cfg must set FixedTTFT
// and FixedITL.
func NewFixed(cfg Config, reg prometheus.Registerer) (*Fixed, error) {
	if !cfg.fixedTiming() {
		return nil, errNotFixed
	}
	f := &Fixed{}
	if err := f.init(cfg, reg); err != nil {
		return nil, err
	}
	f.adm = f
	f.updateGauges()
	go f.loop()
	return f, nil
}

func (f *Fixed) admitted() []*seq   { return f.q }
func (f *Fixed) release(*seq)       {}
func (f *Fixed) inFrontend() []*seq { return nil }

func (f *Fixed) drop(s *seq) {
	if s.heapIdx >= 0 {
		heap.Remove(&f.q, s.heapIdx)
	}
}

// kvUsage is the share of the KV cache the admitted requests' tokens would
// occupy.
func (f *Fixed) kvUsage() float64 {
	bs := f.r.cfg.BlockSize
	blocks := 0
	for _, s := range f.q {
		blocks += ceilDiv(len(s.tokens), bs)
	}
	return math.Min(1, float64(blocks)/float64(f.r.numGPUBlocks))
}

// loop admits waiting requests while max_num_seqs allows, emits every token
// whose deadline has come, and sleeps until the next deadline or arrival.
func (f *Fixed) loop() {
	defer close(f.done)
	for {
		f.mu.Lock()
		if f.stopping() {
			f.mu.Unlock()
			return
		}
		now := f.clock.Now()
		f.admit(now)
		// The step's scheduled requests, as vLLM records them (running
		// requests, vllm:lora_requests_info's adapters): a request whose
		// tokens are all due by now still ran in this step.
		f.updateGauges()
		f.emitDue(now)
		f.admit(now) // slots (and adapters) the finished requests freed
		f.updateGauges()
		var wakeAt time.Time
		if len(f.q) > 0 {
			wakeAt = f.q[0].nextAt
		}
		f.mu.Unlock()
		if wakeAt.IsZero() {
			f.idle()
			continue
		}
		clock.WaitUntil(f.clock, wakeAt, f.wake, f.stop)
	}
}

// admit moves waiting requests into the heap while max_num_seqs allows
// (under mu). A request that waited for a slot starts when it got one.
func (f *Fixed) admit(now time.Time) {
	cfg := &f.r.cfg
	for len(f.q) < cfg.MaxNumSeqs {
		i := slices.IndexFunc(f.waiting, func(s *seq) bool { return f.loraFits(f.q, s) }) // max_loras (lora.go)
		if i < 0 {
			break
		}
		s := f.waiting[i]
		f.waiting = slices.Delete(f.waiting, i, i+1)
		start := s.arrival
		if s.slotWait && now.After(start) {
			start = now // it waited for a max_num_seqs slot
		}
		s.scheduled, s.firstScheduled = true, start
		f.m.Scheduled(start.Sub(s.queued).Seconds(), false, 0, 0)
		s.nextAt = start.Add(cfg.FixedTTFT)
		heap.Push(&f.q, s)
	}
	for _, s := range f.waiting {
		s.slotWait = true
	}
}

// emitDue emits one token for every request whose deadline has come, at
// that deadline (under mu).
func (f *Fixed) emitDue(now time.Time) {
	for len(f.q) > 0 && !f.q[0].nextAt.After(now) {
		s := f.q[0]
		at := s.nextAt
		if f.emit(s, 1, at) == "" {
			s.nextAt = at.Add(f.r.cfg.FixedITL)
			if s.req.Guided {
				s.nextAt = s.nextAt.Add(f.r.cfg.GuidedOverhead)
			}
			heap.Fix(&f.q, s.heapIdx)
		}
		f.m.IterTokens.Observe(1)
	}
}

// fixedHeap orders admitted requests by their next token's deadline.
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
