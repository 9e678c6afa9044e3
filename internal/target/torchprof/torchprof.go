// Package torchprof drives vLLM's torch profiler during a run: POST
// /start_profile once enough requests are running, /stop_profile after a
// steady window, and the trace files the server leaves in its trace
// folder, checked to hold Chrome-trace events.
//
// vLLM serves the two endpoints only when its profiler is on (the
// VLLM_TORCH_PROFILER_DIR environment variable, or --profiler-config in
// newer releases); otherwise they are not routes and answer 404. Check
// tells the two apart before any load with GET /start_profile, which
// only a served route answers with 405.
package torchprof

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Defaults of Settings.
const (
	// DefaultWindow is how long the profiler runs: vLLM's traces grow by
	// megabytes per second of a busy engine, so a few seconds of steady
	// state are enough to read.
	DefaultWindow = 3 * time.Second
	// DefaultShare is the share of the point's concurrency that must be
	// running before the profiler starts (a steady batch, not the ramp).
	DefaultShare = 0.8
	// DefaultFlushTimeout bounds the wait for the trace files after
	// /stop_profile: vLLM writes them before it answers, but a large trace
	// on a slow disk, or a folder mounted from elsewhere, can lag.
	DefaultFlushTimeout = 2 * time.Minute
	// DefaultRequestTimeout bounds /stop_profile, which returns once vLLM
	// has flushed its traces (minutes for a big model: vLLM's docs
	// suggest raising VLLM_RPC_TIMEOUT).
	DefaultRequestTimeout = 10 * time.Minute
)

// poll is how often the running gauge and the trace folder are read.
const poll = 100 * time.Millisecond

// ErrNotEnabled is the server's 404 on the profiler's endpoints: its
// profiler is off.
var ErrNotEnabled = errors.New("the server's profiler is off")

// HowToEnable says how vLLM's profiler is turned on.
const HowToEnable = `start vLLM with --profiler-config '{"profiler":"torch","torch_profiler_dir":"/traces"}' (newer releases), or with VLLM_TORCH_PROFILER_DIR=/traces in its environment (older releases, deprecated in newer ones); vllm-sim takes both`

// TraceSuffix ends the files torch's trace handler writes (then ".gz"
// unless gzip is off).
const TraceSuffix = ".pt.trace.json"

// Client calls a server's profiler endpoints.
type Client struct {
	base, apiKey string
	hc           *http.Client
}

// New returns a client of the server at base (its base URL); apiKey, when
// set, goes as the bearer token.
func New(base, apiKey string) *Client {
	return &Client{base: strings.TrimRight(base, "/"), apiKey: apiKey, hc: &http.Client{Timeout: DefaultRequestTimeout}}
}

// Check reports whether the server serves the profiler: ErrNotEnabled
// (with how to turn it on) for a 404 on GET /start_profile; a served
// route answers 405 (it takes POST only).
func (c *Client) Check(ctx context.Context) error {
	code, _, err := c.do(ctx, http.MethodGet, "/start_profile")
	if err != nil {
		return err
	}
	if code == http.StatusNotFound {
		return c.notEnabled("GET /start_profile")
	}
	return nil
}

// Start starts the profiler (POST /start_profile).
func (c *Client) Start(ctx context.Context) error { return c.post(ctx, "/start_profile") }

// Stop stops the profiler (POST /stop_profile); vLLM answers once the
// traces are written.
func (c *Client) Stop(ctx context.Context) error { return c.post(ctx, "/stop_profile") }

func (c *Client) notEnabled(what string) error {
	return fmt.Errorf("%w: %s at %s answered 404: %s", ErrNotEnabled, what, c.base, HowToEnable)
}

func (c *Client) post(ctx context.Context, path string) error {
	code, body, err := c.do(ctx, http.MethodPost, path)
	switch {
	case err != nil:
		return err
	case code == http.StatusNotFound:
		return c.notEnabled("POST " + path)
	case code != http.StatusOK:
		return fmt.Errorf("POST %s%s: %d %s", c.base, path, code, strings.TrimSpace(body))
	}
	return nil
}

func (c *Client) do(ctx context.Context, method, path string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, nil)
	if err != nil {
		return 0, "", err
	}
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b), nil
}

// Settings say when the profiler runs and where its traces appear.
type Settings struct {
	// Dir is the server's trace folder as this machine sees it; "" when
	// it is not reachable from here (the traces stay on the server).
	Dir string
	// Window is how long the profiler runs (DefaultWindow when 0); it
	// stops earlier when the load ends.
	Window time.Duration
	// Running is how many requests must be running before it starts.
	Running int
	// FlushTimeout bounds the wait for the trace files
	// (DefaultFlushTimeout when 0).
	FlushTimeout time.Duration
}

// Target is the running requests to wait for at concurrency n (0: an
// open loop): DefaultShare of n, at least 1.
func Target(n int) int { return max(1, int(DefaultShare*float64(n))) }

// Capture is what one profiling window produced.
type Capture struct {
	// Dir is Settings.Dir; Files the traces that appeared there (none
	// listed when Dir is "").
	Dir   string
	Files []string
	// Events counts the trace events across Files.
	Events int
	// Start and Stop bound the window; RunningAtStart is the running
	// requests the gauge showed when it started (-1: not read).
	Start, Stop    time.Time
	RunningAtStart int
	// Err is why the capture failed (nil when it did not).
	Err error
}

// Run captures one window: it waits until running reports at least
// s.Running requests (read every 100 ms; nil starts at once), starts the
// profiler, stops it after s.Window or when done closes, and collects
// the traces in s.Dir. The load's end (done) before the start is an
// error naming the target.
func (c *Client) Run(ctx context.Context, s Settings, running func(context.Context) (int, error), done <-chan struct{}) *Capture {
	cp := &Capture{Dir: s.Dir, RunningAtStart: -1}
	window := s.Window
	if window <= 0 {
		window = DefaultWindow
	}
	if running != nil {
		tick := time.NewTicker(poll)
		defer tick.Stop()
		for {
			n, err := running(ctx)
			if err == nil && n >= s.Running {
				cp.RunningAtStart = n
				break
			}
			select {
			case <-ctx.Done():
				cp.Err = ctx.Err()
				return cp
			case <-done:
				cp.Err = fmt.Errorf("the profiler did not start: the load ended before %d requests were running at once (send more requests, or lower the running target)", s.Running)
				return cp
			case <-tick.C:
			}
		}
	}
	cp.Start = time.Now()
	if err := c.Start(ctx); err != nil {
		cp.Err = err
		return cp
	}
	t := time.NewTimer(window)
	select {
	case <-t.C:
	case <-done:
		t.Stop()
	case <-ctx.Done():
		t.Stop()
	}
	// Stop even after an interruption: a profiler left running fills the
	// server's disk.
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultRequestTimeout)
	defer cancel()
	err := c.Stop(stopCtx)
	cp.Stop = time.Now()
	if err != nil {
		cp.Err = err
		return cp
	}
	if s.Dir != "" {
		flush := s.FlushTimeout
		if flush <= 0 {
			flush = DefaultFlushTimeout
		}
		cp.Files, cp.Events, cp.Err = Collect(ctx, s.Dir, cp.Start, flush)
	}
	return cp
}

// Summary is one line about the capture, for a run's output.
func (cp *Capture) Summary() string {
	switch {
	case cp == nil:
		return ""
	case cp.Err != nil:
		return "torch profile: " + cp.Err.Error()
	case cp.Dir == "":
		return fmt.Sprintf("torch profile: %s window from %d running requests; the traces are in the server's own trace folder (name it with --torch-profile-dir to have them checked)",
			cp.Stop.Sub(cp.Start).Round(time.Millisecond), cp.RunningAtStart)
	}
	return fmt.Sprintf("torch profile: %s window from %d running requests, %d trace events in %s",
		cp.Stop.Sub(cp.Start).Round(time.Millisecond), cp.RunningAtStart, cp.Events, strings.Join(cp.Files, ", "))
}

// Traces lists dir's trace files (*.pt.trace.json, with or without .gz)
// last modified at or after since, sorted.
func Traces(dir string, since time.Time) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("trace folder: %w", err)
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, TraceSuffix) || strings.HasSuffix(name, TraceSuffix+".gz")) {
			continue
		}
		info, err := e.Info()
		if err != nil || info.ModTime().Before(since.Add(-time.Second)) { // a coarse file-system clock
			continue
		}
		out = append(out, filepath.Join(dir, name))
	}
	sort.Strings(out)
	return out, nil
}

// Events reads a trace file (gzip or not) and counts its traceEvents; an
// error when it is not a Chrome trace or holds none.
func Events(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	if bytes.HasPrefix(b, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		if b, err = io.ReadAll(zr); err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	var t struct {
		TraceEvents []json.RawMessage `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return 0, fmt.Errorf("%s: not a Chrome trace: %w", path, err)
	}
	if len(t.TraceEvents) == 0 {
		return 0, fmt.Errorf("%s: no traceEvents", path)
	}
	return len(t.TraceEvents), nil
}

// Collect waits up to timeout for trace files in dir modified since
// then, until their sizes hold still between two reads, and checks each
// (Events).
func Collect(ctx context.Context, dir string, since time.Time, timeout time.Duration) ([]string, int, error) {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		files, err := Traces(dir, since)
		if err != nil {
			return nil, 0, err
		}
		sizes := sizesOf(files)
		if len(files) > 0 && sizes == last {
			total := 0
			var errs []error
			for _, f := range files {
				n, err := Events(f)
				total += n
				errs = append(errs, err)
			}
			return files, total, errors.Join(errs...)
		}
		last = sizes
		if time.Now().After(deadline) {
			return nil, 0, fmt.Errorf("no trace file (*%s or *%s.gz) appeared in %s within %s of /stop_profile: is it the folder the server writes to (its torch_profiler_dir, as mounted here)?", TraceSuffix, TraceSuffix, dir, timeout)
		}
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// sizesOf is the files' names and sizes, to see whether they still grow.
func sizesOf(files []string) string {
	var b strings.Builder
	for _, f := range files {
		if info, err := os.Stat(f); err == nil {
			fmt.Fprintf(&b, "%s:%d;", f, info.Size())
		}
	}
	return b.String()
}
