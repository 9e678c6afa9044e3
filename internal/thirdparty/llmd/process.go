package llmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

const (
	// StartTimeout bounds Start's wait for the simulator to answer: it is
	// ready in milliseconds.
	StartTimeout = 30 * time.Second
	// BuildTimeout bounds StartT's build of the binary: minutes cold.
	BuildTimeout = 15 * time.Minute
	// logLines is how many of the simulator's last output lines a Process
	// keeps.
	logLines = 500
	// failureLines is how many of them an error carries.
	failureLines = 20
	// pollInterval is how often Start asks /health.
	pollInterval = 20 * time.Millisecond
	// portTries is how often Start picks another port when the one it
	// picked was taken before the simulator bound it.
	portTries = 3
)

// loopback is where a started simulator is reached.
const loopback = "127.0.0.1"

// Process is a running llm-d-inference-sim started by Start.
type Process struct {
	cmd     *exec.Cmd
	base    string
	model   string
	out     *lineRing
	done    chan struct{} // closed when the process has exited
	waitErr error         // set before done closes

	closeOnce sync.Once
	closeErr  error
}

// Start runs the simulator (Binary) with args on a free loopback port,
// offline (OfflineFlag first, so that args may not turn it off by
// accident; --force-dummy-tokenizer=false would), with --model DefaultModel
// when args name no --model, and waits up to StartTimeout (or until ctx
// ends) for /health to answer 200 and /v1/models to name the model. args
// must not set --port. An error carries the simulator's last output lines;
// on error nothing is left running.
//
// The simulator exits with status 0 after a configuration error (an
// unknown flag, a bad value): Start reports any exit before it answers as
// a failure.
func Start(ctx context.Context, args ...string) (*Process, error) {
	if _, err := commandLine(0, args); err != nil {
		return nil, err
	}
	path, err := Binary(ctx)
	if err != nil {
		return nil, err
	}
	var last error
	for range portTries {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("llm-d-inference-sim: free port: %w", err)
		}
		argv, err := commandLine(port, args)
		if err != nil {
			return nil, err
		}
		p, err := start(ctx, path, port, argv)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, errPortTaken) {
			return nil, err
		}
		last = err
	}
	return nil, last
}

// errPortTaken marks a start that failed because another process took
// the port between freePort and the simulator's bind.
var errPortTaken = errors.New("port taken")

// commandLine is the simulator's arguments for port and the caller's args.
func commandLine(portNumber int, args []string) ([]string, error) {
	hasModel := false
	for _, a := range args {
		switch {
		case cliarg.Port.Is(a):
			return nil, fmt.Errorf("llm-d-inference-sim: Start picks the port itself; drop %q from the arguments", a)
		case cliarg.Model.Is(a):
			hasModel = true
		}
	}
	argv := append(cliarg.Port.With(strconv.Itoa(portNumber)), OfflineFlag)
	if !hasModel {
		argv = append(argv, cliarg.Model.With(DefaultModel)...)
	}
	return append(argv, args...), nil
}

// freePort returns a TCP port that is free on loopback now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp4", net.JoinHostPort(loopback, "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs path with argv and waits until it answers on port.
func start(ctx context.Context, path string, port int, argv []string) (*Process, error) {
	p := &Process{
		base: "http://" + net.JoinHostPort(loopback, strconv.Itoa(port)),
		out:  newLineRing(logLines),
		done: make(chan struct{}),
	}
	// Not CommandContext: ctx bounds the start, not the process's life.
	p.cmd = exec.Command(path, argv...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("llm-d-inference-sim: %w", err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	waitCtx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	if err := p.waitReady(waitCtx); err != nil {
		_ = p.Close()
		err = fmt.Errorf("llm-d-inference-sim %s: %w\nlast %d output lines:\n  %s", strings.Join(argv, " "), err, failureLines, strings.Join(p.Logs(failureLines), "\n  "))
		if p.portTaken() {
			return nil, errors.Join(errPortTaken, err)
		}
		return nil, err
	}
	return p, nil
}

// waitReady polls /health until it answers 200, then reads the served
// model from /v1/models. It fails at once when the process exits.
func (p *Process) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	var last error
	for {
		if last = get(ctx, client, p.base+"/health", nil); last == nil {
			break
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before it answered (%v; it exits 0 after a configuration error)", p.waitErr)
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w (last: %v)", ctx.Err(), last)
		case <-tick.C:
		}
	}
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := get(ctx, client, p.base+"/v1/models", &models); err != nil {
		return err
	}
	if len(models.Data) == 0 {
		return errors.New("/v1/models lists no model")
	}
	p.model = models.Data[0].ID
	return nil
}

// get asks url and decodes its JSON answer into v (nil: any 200 will do).
func get(ctx context.Context, client *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if v == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

// portTaken reports whether the process failed to bind its port.
func (p *Process) portTaken() bool {
	for _, l := range p.Logs(failureLines) {
		if strings.Contains(l, "address already in use") {
			return true
		}
	}
	return false
}

// BaseURL is the simulator's root, http://127.0.0.1:PORT (the OpenAI API
// is under /v1, the metrics at /metrics).
func (p *Process) BaseURL() string { return p.base }

// Model is the served model name, the first entry of /v1/models.
func (p *Process) Model() string { return p.model }

// Logs returns up to the last n lines the simulator wrote (stdout and
// stderr; it logs with klog to stderr).
func (p *Process) Logs(n int) []string { return p.out.Last(n) }

// Close kills the simulator and waits for it to exit. It returns an error
// only when the simulator had exited before, on its own (a crash). It is
// safe to call more than once.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		select {
		case <-p.done:
			p.closeErr = fmt.Errorf("llm-d-inference-sim had exited before Close: %v", p.waitErr)
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p.closeErr
}

// StartT is Start for a test: it builds the binary (up to BuildTimeout),
// skips tb where that is not possible (no go command, no module proxy, not
// in the checkout and no VLLMPERF_LLMD_BINARY) except under CI=true, where
// it fails; fails tb when the simulator does not start; and stops it when
// the test ends, logging its last lines when the test failed.
func StartT(tb testing.TB, args ...string) *Process {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), BuildTimeout)
	defer cancel()
	if _, err := Binary(ctx); err != nil {
		unavailable(tb, "llm-d-inference-sim", err)
	}
	p, err := Start(ctx, args...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("llm-d-inference-sim's last lines:\n  %s", strings.Join(p.Logs(40), "\n  "))
		}
		if err := p.Close(); err != nil {
			tb.Error(err)
		}
	})
	return p
}

// lineRing keeps the last lines written to it.
type lineRing struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial string
}

func newLineRing(max int) *lineRing { return &lineRing{max: max} }

// Write splits b into lines; an unterminated tail waits for the next write.
func (r *lineRing) Write(b []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	parts := strings.Split(r.partial+string(b), "\n")
	r.partial = parts[len(parts)-1]
	for _, l := range parts[:len(parts)-1] {
		r.lines = append(r.lines, strings.TrimRight(l, "\r"))
	}
	if len(r.lines) > r.max {
		r.lines = append(r.lines[:0:0], r.lines[len(r.lines)-r.max:]...)
	}
	return len(b), nil
}

// Last returns up to n of the newest lines, the unterminated tail included.
func (r *lineRing) Last(n int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := r.lines
	if r.partial != "" {
		all = append(all[:len(all):len(all)], r.partial)
	}
	if n <= 0 || n > len(all) {
		n = len(all)
	}
	return append([]string(nil), all[len(all)-n:]...)
}
