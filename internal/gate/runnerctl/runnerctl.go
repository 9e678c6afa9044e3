// Package runnerctl is the runner control: a fixed CPU workload that does
// not depend on the system under test, timed in the client process before,
// during and after each run. Its figure (nanoseconds per block of the
// workload) is recorded with every run (units.RunnerCPU and
// units.RunnerParallel), so a baseline carries the speed of the machine it
// was measured on and the gate can tell a slower runner from a slower
// change (docs/gate.md, "A slower runner"): Shifts reads the control back
// from two sides' bench files, for the gate to judge.
//
// The workload is deterministic: the same instructions on the same 16 KiB
// working set (inside any core's L1 or L2 cache) every time, so its time
// moves only with the core's speed and its share of it: another process
// on the core, a lower clock, a noisy neighbour of a virtual machine.
package runnerctl

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// tableWords is the working set in 32-bit words (16 KiB).
const tableWords = 4096

// BlockIters is the work of one block: this many steps of a xorshift
// generator, each updating one word of the working set.
const BlockIters = 1024

// seed starts every block's generator.
const seed = 0x9e3779b97f4a7c15

// sink keeps the workload's result alive, so the compiler cannot drop it.
var sink atomic.Uint64

// block runs one block on t from the generator state x and returns the
// new state.
func block(t *[tableWords]uint32, x uint64) uint64 {
	for range BlockIters {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		i := x & (tableWords - 1)
		t[i] = t[i]*2654435761 + uint32(x>>32)
	}
	return x
}

// Checksum runs n blocks from a zeroed working set and returns a digest
// of the state and the table: the same for every run of the same n (a
// test pins it, so a change of the workload is seen).
func Checksum(n int) uint64 {
	var t [tableWords]uint32
	x := uint64(seed)
	for range n {
		x = block(&t, x)
	}
	for _, w := range t {
		x = x*31 + uint64(w)
	}
	return x
}

// Serial times n blocks on the calling goroutine and returns nanoseconds
// per block.
func Serial(n int) float64 {
	n = max(n, 1)
	var t [tableWords]uint32
	x := uint64(seed)
	start := time.Now()
	for range n {
		x = block(&t, x)
	}
	d := time.Since(start)
	sink.Add(x)
	return float64(d.Nanoseconds()) / float64(n)
}

// Parallel runs n blocks on each of GOMAXPROCS goroutines at once and
// returns the wall time per block: on an idle machine the same as Serial,
// more when another process holds some of the cores.
func Parallel(n int) float64 {
	n = max(n, 1)
	procs := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	start := time.Now()
	for range procs {
		wg.Go(func() {
			var t [tableWords]uint32
			x := uint64(seed)
			for range n {
				x = block(&t, x)
			}
			sink.Add(x)
		})
	}
	wg.Wait()
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

// The probes' default sizes: about 10 ms before and after a run on a
// current core (BenchmarkBlock: some 2.5 µs a block), 2 ms every second
// during it (0.2% of one core).
const (
	// DefaultEdgeBlocks are the blocks of the serial and the parallel
	// probe before and after a run.
	DefaultEdgeBlocks = 4000
	// DefaultDuringBlocks are the blocks of each serial probe during it.
	DefaultDuringBlocks = 800
	// DefaultInterval is the time between the probes during it.
	DefaultInterval = time.Second
)

// Settings size a Probe; the zero value of a field is its default.
type Settings struct {
	EdgeBlocks, DuringBlocks int
	Interval                 time.Duration
}

func (s Settings) withDefaults() Settings {
	if s.EdgeBlocks <= 0 {
		s.EdgeBlocks = DefaultEdgeBlocks
	}
	if s.DuringBlocks <= 0 {
		s.DuringBlocks = DefaultDuringBlocks
	}
	if s.Interval <= 0 {
		s.Interval = DefaultInterval
	}
	return s
}

// Result is what one run's probes measured, in nanoseconds per block, in
// the order taken: Serial every serial probe, Idle the serial ones before
// and after the run (the server idle), Parallel the parallel ones (before
// and after).
type Result struct {
	Serial, Idle, Parallel []float64
}

// Metrics are the run's figures: the median of the serial probes
// (units.RunnerCPU), of the idle ones (units.RunnerIdle, which the gate
// judges the runner by where both sides have it) and of the parallel
// ones (units.RunnerParallel); a unit without a probe is left out.
func (r Result) Metrics() map[string]float64 {
	m := map[string]float64{}
	if len(r.Serial) > 0 {
		m[units.RunnerCPU] = median(r.Serial)
	}
	if len(r.Idle) > 0 {
		m[units.RunnerIdle] = median(r.Idle)
	}
	if len(r.Parallel) > 0 {
		m[units.RunnerParallel] = median(r.Parallel)
	}
	return m
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Probe is the control of one run: Start times the edge probes and starts
// the periodic ones, Stop ends them and times the edge probes again.
type Probe struct {
	set    Settings
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	res    Result
}

// Start times the serial and the parallel probe, then a serial probe every
// Interval until Stop (or ctx's end).
func Start(ctx context.Context, set Settings) *Probe {
	set = set.withDefaults()
	p := &Probe{set: set, done: make(chan struct{})}
	p.edge()
	ctx, p.cancel = context.WithCancel(ctx)
	go p.during(ctx)
	return p
}

func (p *Probe) edge() {
	s, par := Serial(p.set.EdgeBlocks), Parallel(p.set.EdgeBlocks)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.res.Serial = append(p.res.Serial, s)
	p.res.Idle = append(p.res.Idle, s)
	p.res.Parallel = append(p.res.Parallel, par)
}

func (p *Probe) during(ctx context.Context) {
	defer close(p.done)
	tick := time.NewTicker(p.set.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			v := Serial(p.set.DuringBlocks)
			p.mu.Lock()
			p.res.Serial = append(p.res.Serial, v)
			p.mu.Unlock()
		}
	}
}

// Stop ends the periodic probes, times the edge probes again and returns
// every probe's figure. Call it once.
func (p *Probe) Stop() Result {
	p.cancel()
	<-p.done
	p.edge()
	p.mu.Lock()
	defer p.mu.Unlock()
	return Result{Serial: slices.Clone(p.res.Serial), Idle: slices.Clone(p.res.Idle), Parallel: slices.Clone(p.res.Parallel)}
}
