package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/vllmperf/vllmperf/internal/harness/profile"
	"github.com/vllmperf/vllmperf/internal/vllmsim"
)

// SimBackend runs the simulator in this process, on a loopback port.
type SimBackend struct {
	cfg Config
}

// Kind returns KindSim.
func (b *SimBackend) Kind() Kind { return KindSim }

// SimArgs is the simulator's command line for p listening on host:port:
// the model, --host, --port, then the profile's vLLM flags, extra args and
// --sim-* flags, the same for the in-process and the container simulator.
func SimArgs(p profile.Profile, host string, port int) []string {
	args := []string{p.Model, "--host", host, "--port", strconv.Itoa(port)}
	return append(args, p.SimArgs()...)
}

// Start starts the simulator for p and waits for /health.
func (b *SimBackend) Start(ctx context.Context, p profile.Profile) (Server, error) {
	p = p.WithModel(b.cfg.Model)
	begin := time.Now()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start vllm: listen on loopback: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	logs := newLineRing(b.cfg.redact)
	sim, err := vllmsim.New(SimArgs(p, "127.0.0.1", port), logs)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("start vllm: simulator for profile %s: %w", p.Name, err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s := &simServer{
		base:   "http://" + ln.Addr().String(),
		model:  p.ServedName(),
		logs:   logs,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		s.serveErr = sim.Serve(runCtx, ln)
	}()
	waitCtx, stop := context.WithTimeout(ctx, b.cfg.startupTimeout())
	defer stop()
	exited := func() error {
		select {
		case <-s.done:
			return fmt.Errorf("simulator exited: %v", s.serveErr)
		default:
			return nil
		}
	}
	if err := waitHealthy(waitCtx, s.base, exited); err != nil {
		closeErr := s.Close(context.Background())
		return nil, fmt.Errorf("start vllm: profile %s: simulator not ready: %w", p.Name, errors.Join(err, closeErr))
	}
	s.ready = time.Since(begin)
	b.cfg.logf("vllm sim: profile %s ready in %s at %s", p.Name, s.ready.Round(time.Millisecond), s.base)
	return s, nil
}

// simServer is an in-process simulator.
type simServer struct {
	base, model string
	ready       time.Duration
	logs        *lineRing
	cancel      context.CancelFunc
	done        chan struct{}
	serveErr    error
	once        sync.Once
	closeErr    error
}

func (s *simServer) BaseURL() string        { return s.base }
func (s *simServer) MetricsURL() string     { return s.base + "/metrics" }
func (s *simServer) Model() string          { return s.model }
func (s *simServer) ReadyIn() time.Duration { return s.ready }
func (s *simServer) Logs(n int) []string    { return s.logs.Last(n) }

// Close stops the simulator and waits for its graceful shutdown, at most
// until ctx ends.
func (s *simServer) Close(ctx context.Context) error {
	s.once.Do(func() {
		s.cancel()
		select {
		case <-s.done:
			if s.serveErr != nil && !errors.Is(s.serveErr, context.Canceled) {
				s.closeErr = fmt.Errorf("simulator: %w", s.serveErr)
			}
		case <-ctx.Done():
			s.closeErr = fmt.Errorf("simulator shutdown: %w", ctx.Err())
		}
	})
	return s.closeErr
}
