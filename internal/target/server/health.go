package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/vllmperf/vllmperf/internal/request/gateway"
)

// Waits of the /health polling.
const (
	// healthRequestTimeout bounds one /health request.
	healthRequestTimeout = 2 * time.Second
	// simPollInterval is how often the in-process simulator's /health is
	// polled: it is ready in milliseconds.
	simPollInterval = 20 * time.Millisecond
	// containerPollInterval is how often a container's /health (and its
	// state, to fail at once when it exits) is polled.
	containerPollInterval = 250 * time.Millisecond
)

// loopback is where servers this package starts are reached: in process,
// and containers' ports are published on it only (modifyHostConfig).
const loopback = "127.0.0.1"

// waitHealthy polls baseURL+"/health" every interval until it answers 200,
// ctx ends, or failed reports a reason to stop (a process that exited).
func waitHealthy(ctx context.Context, baseURL string, interval time.Duration, failed func() error) error {
	client := (*gateway.Gateway)(nil).Client(1) // a server this package started: on loopback
	defer client.CloseIdleConnections()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var last error
	for {
		rctx, cancel := context.WithTimeout(ctx, healthRequestTimeout)
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, baseURL+"/health", nil)
		if err != nil {
			cancel()
			return err
		}
		resp, err := client.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("/health answered %s", resp.Status)
		} else {
			last = err
		}
		if failed != nil {
			if err := failed(); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// healthStrategy is the container wait strategy: /health answers 200 on
// the container's port, published on loopback. It fails at once when the
// container exits. Unlike wait.ForHTTP it does not ask testcontainers for
// the Docker host, which inside a container resolves to the default
// gateway, where a loopback-only port is not reachable; no
// TESTCONTAINERS_HOST_OVERRIDE is needed.
type healthStrategy struct {
	port    string // the container port, e.g. "8000/tcp"
	timeout time.Duration
}

var (
	_ wait.Strategy        = healthStrategy{}
	_ wait.StrategyTimeout = healthStrategy{}
)

// Timeout implements wait.StrategyTimeout.
func (h healthStrategy) Timeout() *time.Duration { return &h.timeout }

// WaitUntilReady implements wait.Strategy.
func (h healthStrategy) WaitUntilReady(ctx context.Context, target wait.StrategyTarget) error {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	exited := func() error { return containerExited(ctx, target) }
	tick := time.NewTicker(containerPollInterval)
	defer tick.Stop()
	for {
		port, err := target.MappedPort(ctx, h.port)
		if err == nil && !port.IsZero() {
			return waitHealthy(ctx, "http://"+net.JoinHostPort(loopback, port.Port()), containerPollInterval, exited)
		}
		if err := exited(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (port %s not published: %v)", ctx.Err(), h.port, err)
		case <-tick.C:
		}
	}
}

// containerExited returns an error when the container is no longer running.
func containerExited(ctx context.Context, target wait.StrategyTarget) error {
	state, err := target.State(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("container state: %w", err)
	case state.Running:
		return nil
	case state.OOMKilled:
		return fmt.Errorf("container crashed with out-of-memory (OOMKilled)")
	case state.Status == container.StateExited:
		return fmt.Errorf("container exited with code %d", state.ExitCode)
	}
	return fmt.Errorf("unexpected container status %q", state.Status)
}
