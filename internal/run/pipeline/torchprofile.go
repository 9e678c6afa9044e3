package pipeline

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
)

// DefaultTraceDir is where --torch-profile's traces go when vllmperf
// starts the server (vllmperf run, the suite).
const DefaultTraceDir = "vllm-traces"

// WithTorchProfile captures one torch profiler window during the measured
// load (package torchprof): Run checks that the server serves the
// profiler before it sends a request (an error saying how to turn it on
// when not), starts it once s.Running requests run (0: the share
// torchprof.Target of the point's concurrency), stops it after s.Window
// and collects the traces in s.Dir; result.Result.TorchProfile says what came of
// it.
func WithTorchProfile(s torchprof.Settings) Option {
	return func(o *options) { o.torchProfile = &s }
}

// profiler checks the server's profiler before the load; nil when no
// capture was asked for.
func profiler(ctx context.Context, srv server.Server, o options) (*torchprof.Client, error) {
	if o.torchProfile == nil {
		return nil, nil
	}
	c := torchprof.New(srv.BaseURL(), o.apiKey)
	if err := c.Check(ctx); err != nil {
		return nil, fmt.Errorf("harness: --torch-profile: %w", err)
	}
	return c, nil
}

// startProfile runs the capture beside the load of cfg; the function it
// returns ends the window (if still open) once the load is done and puts
// the capture in the result (a failed one among its warnings too). The
// running requests count only once the warm-up is over (cfg.Progress is
// wrapped to see it end).
func startProfile(ctx context.Context, c *torchprof.Client, p scenario.Point, o options, scraper scrape.Source, cfg *load.Config) func(*result.Result) {
	if c == nil {
		return func(*result.Result) {}
	}
	s := *o.torchProfile
	if s.Running <= 0 {
		s.Running = torchprof.Target(p.Concurrency())
	}
	var warm atomic.Bool
	warm.Store(cfg.Warmup == 0)
	progress := cfg.Progress
	cfg.Progress = func(done, total int) {
		if done >= cfg.Warmup {
			warm.Store(true)
		}
		if progress != nil {
			progress(done, total)
		}
	}
	running := func(ctx context.Context) (int, error) {
		switch {
		case !warm.Load():
			return 0, nil
		case scraper == nil: // no /metrics: start once the warm-up is over
			return s.Running, nil
		}
		snap, err := scraper.Scrape(ctx)
		if err != nil {
			return 0, err
		}
		v, err := snap.Gauge(scrape.NumRequestsRunning)
		return int(v), err
	}
	done := make(chan struct{})
	out := make(chan *torchprof.Capture, 1)
	go func() { out <- c.Run(ctx, s, running, done) }()
	return func(res *result.Result) {
		close(done)
		res.TorchProfile = <-out
		if err := res.TorchProfile.Err; err != nil {
			res.Warnings = append(res.Warnings, fmt.Errorf("torch profile: %w", err))
		}
	}
}
