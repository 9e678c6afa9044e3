package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// lineRing keeps the last lines written to it, with secrets redacted. It
// is an io.Writer (for in-process servers) and a testcontainers log
// consumer (for containers).
type lineRing struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial string
	redact  func(string) string
}

// ringLines is how many lines a server's log buffer keeps.
const ringLines = 2000

func newLineRing(redact func(string) string) *lineRing {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	return &lineRing{max: ringLines, redact: redact}
}

// Write splits p into lines; an unterminated tail waits for the next write.
func (r *lineRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.partial + string(p)
	parts := strings.Split(s, "\n")
	r.partial = parts[len(parts)-1]
	for _, l := range parts[:len(parts)-1] {
		r.add(strings.TrimRight(l, "\r"))
	}
	return len(p), nil
}

func (r *lineRing) add(l string) {
	r.lines = append(r.lines, r.redact(l))
	if len(r.lines) > r.max {
		r.lines = append(r.lines[:0:0], r.lines[len(r.lines)-r.max:]...)
	}
}

// Last returns up to n of the newest lines, the unterminated tail included.
func (r *lineRing) Last(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := r.lines
	if r.partial != "" {
		all = append(all[:len(all):len(all)], r.redact(r.partial))
	}
	if n <= 0 || n > len(all) {
		n = len(all)
	}
	return append([]string(nil), all[len(all)-n:]...)
}

// GPUSelection is a parsed VLLMPERF_GPUS value.
type GPUSelection struct {
	All bool     // every GPU (docker --gpus all)
	IDs []string // these device ids or UUIDs; empty with All false: none
}

// parseGPUs parses "all", "none" (or "") and comma-separated device ids.
func parseGPUs(s string) (GPUSelection, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "all":
		return GPUSelection{All: true}, nil
	case "", "none":
		return GPUSelection{}, nil
	}
	var ids []string
	for _, id := range strings.Split(s, ",") {
		id = strings.TrimSpace(id)
		if id == "" || strings.ContainsAny(id, " \t=") {
			return GPUSelection{}, fmt.Errorf("%s=%q: want all, none, or device ids such as 0,1 (or GPU UUIDs)", EnvGPUs, s)
		}
		ids = append(ids, id)
	}
	return GPUSelection{IDs: ids}, nil
}

// PrepareEnvironment sets TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 and
// TESTCONTAINERS_RYUK_DISABLED=true where they are unset and the process
// runs inside a container (/.dockerenv exists). There testcontainers would
// otherwise aim at the default gateway, and the Ryuk reaper image cannot be
// pulled; this package removes its containers itself (Close, Reap). An
// ordinary Docker host is left alone. It returns the variables it set.
func PrepareEnvironment() []string {
	return prepareEnvironment("/.dockerenv", os.LookupEnv, os.Setenv)
}

func prepareEnvironment(marker string, lookup func(string) (string, bool), set func(string, string) error) []string {
	if _, err := os.Stat(marker); err != nil {
		return nil
	}
	var done []string
	for _, kv := range [][2]string{
		{"TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1"},
		{"TESTCONTAINERS_RYUK_DISABLED", "true"},
	} {
		if _, ok := lookup(kv[0]); ok {
			continue
		}
		if set(kv[0], kv[1]) == nil {
			done = append(done, kv[0]+"="+kv[1])
		}
	}
	return done
}

// waitHealthy polls url+"/health" until it answers 200, ctx ends, or
// failed reports a reason to stop (such as a process that exited).
func waitHealthy(ctx context.Context, baseURL string, failed func() error) error {
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/health", nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
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
