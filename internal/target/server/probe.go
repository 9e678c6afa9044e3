package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// probeLogLines is how many of the server's last log lines a DownError
// carries.
const probeLogLines = failureLogLines

// ErrServerDown is wrapped by Probe's errors.
var ErrServerDown = errors.New("server down")

// DownError says a server stopped serving during a run: it exited (a
// container or the in-process simulator), or its /health no longer answers
// 200 (vLLM's engine died; vLLM then exits too). Its message carries the
// server's last log lines, where they are visible.
type DownError struct {
	// Exited is true when the server's process is gone, false when it runs
	// but is not healthy.
	Exited bool
	// Reason says what was seen: "container exited with code 1",
	// "/health answered 503 Service Unavailable".
	Reason string
	// Logs are the server's last log lines, secrets redacted; nil for a
	// server whose output is not visible (external).
	Logs []string
}

func (e *DownError) Error() string {
	var sb strings.Builder
	if e.Exited {
		sb.WriteString("server exited: ")
	} else {
		sb.WriteString("server no longer healthy: ")
	}
	sb.WriteString(e.Reason)
	if len(e.Logs) > 0 {
		fmt.Fprintf(&sb, "\nlast %d log lines of the server:\n  %s", len(e.Logs), strings.Join(e.Logs, "\n  "))
	}
	return sb.String()
}

// Is makes errors.Is(err, ErrServerDown) true.
func (e *DownError) Is(target error) bool { return target == ErrServerDown }

// exitChecker is a server whose process this one can see: it reports how
// it exited, or nil while it runs.
type exitChecker interface {
	exited(ctx context.Context) error
}

// Probe checks that srv still serves, after a run whose requests failed
// for instance: for a server this process started, that it has not
// exited (the container's state, the in-process simulator's Serve), then
// that /health answers 200. It returns nil when srv serves, a *DownError
// when it does not, and another error when it cannot tell (ctx ended). A
// server without /health (404) is taken as serving.
func Probe(ctx context.Context, srv Server) error {
	if ec, ok := srv.(exitChecker); ok {
		if err := ec.exited(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &DownError{Exited: true, Reason: err.Error(), Logs: lastLogs(srv)}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, healthRequestTimeout)
	defer cancel()
	client := GatewayOf(srv).Client(1)
	defer client.CloseIdleConnections()
	_, err := get(ctx, client, srv.BaseURL()+"/health", "")
	var se *httpStatusError
	switch {
	case err == nil, errors.As(err, &se) && se.status == http.StatusNotFound:
		return nil
	case errors.As(err, &se):
		return &DownError{Reason: "/health answered " + se.text, Logs: lastLogs(srv)}
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ctx.Err()
	}
	return &DownError{Reason: "/health: " + err.Error(), Logs: lastLogs(srv)}
}

// Log settling: a container's output reaches Docker a moment after the
// server wrote it, so the lines that say why it went down may lag /health.
const (
	logSettlePoll = 100 * time.Millisecond
	logSettleMax  = 2 * time.Second
)

// lastLogs returns the server's last lines: for a container, read through
// Docker (complete also after it exited) once they stop changing for
// logSettlePoll, at most logSettleMax.
func lastLogs(srv Server) []string {
	cs, ok := srv.(*containerServer)
	if !ok {
		return srv.Logs(probeLogLines)
	}
	lines := containerLogs(cs.c, cs.logs)
	for deadline := time.Now().Add(logSettleMax); time.Now().Before(deadline); {
		time.Sleep(logSettlePoll)
		next := containerLogs(cs.c, cs.logs)
		if slices.Equal(next, lines) {
			break
		}
		lines = next
	}
	return lines
}

// exited reports how the container stopped, nil while it runs.
func (s *containerServer) exited(ctx context.Context) error {
	return containerExited(ctx, s.c)
}

var _ exitChecker = (*containerServer)(nil)

// exited reports why the simulator's Serve returned, nil while it runs.
func (s *simServer) exited(context.Context) error {
	select {
	case <-s.done:
		if s.serveErr != nil {
			return fmt.Errorf("simulator stopped serving: %w", s.serveErr)
		}
		return errors.New("simulator stopped serving")
	default:
		return nil
	}
}

var _ exitChecker = (*simServer)(nil)
