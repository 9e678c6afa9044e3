package runnerctl_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vllmperf/vllmperf/internal/gate/runnerctl"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestChecksum pins the workload: a change of it changes what every
// recorded baseline's runner figure means, so it must be deliberate (and
// the baselines re-recorded with it).
func TestChecksum(t *testing.T) {
	for _, c := range []struct {
		blocks int
		want   uint64
	}{
		{0, 0xd3ac9b798c807c15},
		{1, 0xff1a4af14059e9f9},
		{3, 0x62189b18ab60d979},
	} {
		if got := runnerctl.Checksum(c.blocks); got != c.want {
			t.Errorf("Checksum(%d) = %#x, want %#x", c.blocks, got, c.want)
		}
	}
}

func TestProbe(t *testing.T) {
	defer goleak.VerifyNone(t)
	p := runnerctl.Start(t.Context(), runnerctl.Settings{EdgeBlocks: 20, DuringBlocks: 5, Interval: time.Millisecond})
	deadline := time.Now().Add(5 * time.Second)
	var res runnerctl.Result
	for {
		time.Sleep(20 * time.Millisecond)
		// Stop is once: probe again until a periodic probe has run (a
		// busy machine may delay the ticker's goroutine).
		res = p.Stop()
		if len(res.Serial) > 2 || time.Now().After(deadline) {
			break
		}
		p = runnerctl.Start(t.Context(), runnerctl.Settings{EdgeBlocks: 20, DuringBlocks: 5, Interval: time.Millisecond})
	}
	if len(res.Serial) < 3 || len(res.Parallel) != 2 {
		t.Fatalf("probes: %d serial, %d parallel; want the two edges and at least one during the run (serial), the two edges (parallel)", len(res.Serial), len(res.Parallel))
	}
	for _, v := range append(res.Serial, res.Parallel...) {
		if !(v > 0) {
			t.Fatalf("a probe took %v ns per block: %+v", v, res)
		}
	}
	if len(res.Idle) != 2 || res.Idle[0] != res.Serial[0] || res.Idle[1] != res.Serial[len(res.Serial)-1] {
		t.Errorf("idle probes %v: want the serial edges of %v", res.Idle, res.Serial)
	}
	m := res.Metrics()
	if len(m) != 3 || !(m[units.RunnerCPU] > 0) || !(m[units.RunnerIdle] > 0) || !(m[units.RunnerParallel] > 0) {
		t.Errorf("Metrics() = %v, want %s, %s and %s", m, units.RunnerCPU, units.RunnerIdle, units.RunnerParallel)
	}
}

// TestProbeContext: the periodic probes end with the context, and Stop
// still times the closing edge.
func TestProbeContext(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx, cancel := context.WithCancel(t.Context())
	p := runnerctl.Start(ctx, runnerctl.Settings{EdgeBlocks: 5, DuringBlocks: 5, Interval: time.Hour})
	cancel()
	if res := p.Stop(); len(res.Serial) != 2 || len(res.Idle) != 2 || len(res.Parallel) != 2 {
		t.Errorf("probes %+v, want the two edges only", res)
	}
}

// TestIdleIgnoresTheLoad: a server build that burns more CPU on the
// client's host slows the probes taken during the run, not those before
// and after it: runner-idle-ns stays the machine's, runner-cpu-ns moves
// with the server (the figures of one run, as the probe records them).
func TestIdleIgnoresTheLoad(t *testing.T) {
	quiet := runnerctl.Result{Serial: []float64{2500, 2510, 2490, 2505, 2495}, Idle: []float64{2500, 2495}}
	hungry := runnerctl.Result{Serial: []float64{2510, 3300, 3400, 3350, 2490}, Idle: []float64{2510, 2490}}
	q, h := quiet.Metrics(), hungry.Metrics()
	if h[units.RunnerIdle] > 1.01*q[units.RunnerIdle] {
		t.Errorf("idle figure %v with a hungrier server, %v without: want it unmoved", h[units.RunnerIdle], q[units.RunnerIdle])
	}
	if h[units.RunnerCPU] < 1.2*q[units.RunnerCPU] {
		t.Errorf("the all-probes figure %v, %v without: want it moved by the load", h[units.RunnerCPU], q[units.RunnerCPU])
	}
}

func TestMetricsEmpty(t *testing.T) {
	if m := (runnerctl.Result{}).Metrics(); len(m) != 0 {
		t.Errorf("no probe: Metrics() = %v, want none (never a 0)", m)
	}
	if m := (runnerctl.Result{Serial: []float64{3, 1, 2, 10}}).Metrics(); m[units.RunnerCPU] != 2.5 {
		t.Errorf("median of 1 2 3 10 = %v, want 2.5", m[units.RunnerCPU])
	}
}

// BenchmarkBlock is one block of the workload (the probes' sizes assume
// some 2.5 µs).
func BenchmarkBlock(b *testing.B) {
	for b.Loop() {
		runnerctl.Serial(1)
	}
}
