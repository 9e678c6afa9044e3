package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/vllmsim"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// simArgs is the simulator's command line for p listening on host:port:
// the model, --host, --port, then the profile's vLLM flags, extra args and
// --sim-* flags, the same for the in-process and the container simulator.
func simArgs(p profile.Profile, host string, port int) []string {
	args := slices.Concat([]string{p.Model}, cliarg.Host.With(host), cliarg.Port.With(strconv.Itoa(port)))
	return append(args, p.SimArgs()...)
}

// runSim starts the simulator for p in this process, on a loopback port,
// and waits for /health.
func runSim(ctx context.Context, s settings, p profile.Profile) (Server, error) {
	p = p.WithModel(s.model)
	begin := time.Now()
	ln, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
	if err != nil {
		return nil, fmt.Errorf("start vllm: listen on loopback: %w", err)
	}
	logs := newLineRing(s.redact)
	sim, err := vllmsim.New(append(simArgs(p, loopback, ln.Addr().(*net.TCPAddr).Port), simProfilerArgs(s.traceDir)...), logs)
	if err != nil {
		ln.Close()
		err = fmt.Errorf("start vllm: simulator for profile %s: %w", p.Name, err)
		if _, bad := errors.AsType[*config.ArgError](err); bad {
			err = exitstatus.Usage(err) // a profile value the simulator refuses: bad input
		}
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	srv := &simServer{
		endpoint: endpoint{base: "http://" + ln.Addr().String(), model: p.ServedName(), logs: logs, desc: Description{Backend: KindSim, Image: "in-process", Simulator: true, Digest: NoDigest, Env: ProvenanceEnv(simEnv(p))}},
		cancel:   cancel,
		done:     make(chan struct{}),
	}
	go func() {
		defer close(srv.done)
		srv.serveErr = sim.Serve(runCtx, ln)
	}()
	waitCtx, stop := context.WithTimeout(ctx, s.timeout())
	defer stop()
	exited := func() error {
		select {
		case <-srv.done:
			return fmt.Errorf("simulator exited: %v", srv.serveErr)
		default:
			return nil
		}
	}
	if err := waitHealthy(waitCtx, srv.base, simPollInterval, exited); err != nil {
		closeErr := srv.Close(context.Background())
		return nil, fmt.Errorf("start vllm: profile %s: simulator not ready: %w", p.Name, errors.Join(err, closeErr))
	}
	srv.ready = time.Since(begin)
	s.logf("vllm sim: profile %s ready in %s at %s", p.Name, srv.ready.Round(time.Millisecond), srv.base)
	return srv, nil
}

// simServer is an in-process simulator.
type simServer struct {
	endpoint
	cancel   context.CancelFunc
	done     chan struct{}
	serveErr error // set before done closes
	closed   closeOnce
}

// Close stops the simulator and waits for its graceful shutdown, at most
// until ctx ends.
func (s *simServer) Close(ctx context.Context) error {
	return s.closed.do(func() error {
		s.cancel()
		select {
		case <-s.done:
			if s.serveErr != nil && !errors.Is(s.serveErr, context.Canceled) {
				return fmt.Errorf("simulator: %w", s.serveErr)
			}
			return nil
		case <-ctx.Done():
			return fmt.Errorf("simulator shutdown: %w", ctx.Err())
		}
	})
}
