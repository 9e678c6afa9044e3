package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The rows whose fault is the process's own (its stdout, signals), run
// against the built vllmperf binary.

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// vllmperfBinary builds vllmperf once for the test binary and returns its
// path; TestMain removes it.
func vllmperfBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the vllmperf binary; skipped with -short")
	}
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "vllmperf-test-bin-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "vllmperf")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("go build vllmperf: %v", buildErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

func removeBinary() {
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
}

// process is a running vllmperf whose stderr is read line by line.
type process struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr strings.Builder
	lines  chan string
	done   chan struct{}
}

// startProcess starts the binary with args and stdout; the test's end
// kills it if it still runs.
func startProcess(t *testing.T, ctx context.Context, stdout io.Writer, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.CommandContext(ctx, vllmperfBinary(t), args...), lines: make(chan string, 1024), done: make(chan struct{})}
	p.cmd.Stdout = stdout
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.done })
	return p
}

// wait waits for the process to end and returns its exit status (-1 when a
// signal killed it) and its stderr.
func (p *process) wait(t *testing.T) (int, string) {
	t.Helper()
	<-p.done // stderr read to its end before Wait closes the pipe
	err := p.cmd.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil && p.cmd.ProcessState == nil {
		t.Fatalf("wait: %v", err)
	}
	return p.cmd.ProcessState.ExitCode(), p.stderr.String()
}

// waitLine returns the first stderr line matching re.
func (p *process) waitLine(t *testing.T, re *regexp.Regexp, timeout time.Duration) []string {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l := <-p.lines:
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-p.done:
			t.Fatalf("vllmperf ended before printing a line matching %s:\n%s", re, p.stderr.String())
		case <-deadline:
			t.Fatalf("no stderr line matching %s within %s:\n%s", re, timeout, p.stderr.String())
		}
	}
}

// TestRow03_StdoutClosedOrFullProcess: vllmperf writing its summary to a
// closed pipe (`… | true`) or a full device (`>/dev/full`) still writes
// both files, stops the server, and exits 1 saying stdout failed.
func TestRow03_StdoutClosedOrFullProcess(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	base := startSim(t)
	for _, tc := range []struct {
		name   string
		stdout func(t *testing.T) *os.File
		want   string
	}{
		// The reader is gone: writes fail with EPIPE instead of killing
		// the process with SIGPIPE.
		{"closed pipe", func(t *testing.T) *os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			return w
		}, "broken pipe"},
		// A device that is always full.
		{"full", func(t *testing.T) *os.File {
			f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skipf("no /dev/full: %v", err)
			}
			return f
		}, "no space left on device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			jsonPath, samples := filepath.Join(dir, "r.json"), filepath.Join(dir, "s.jsonl")
			out := tc.stdout(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p := startProcess(t, ctx, out, "run", "--quiet", "--target", base, "--concurrency", "2", "--requests", "4", "--warmup", "0",
				"--max-tokens", "4", "--json", jsonPath, "--samples", samples)
			out.Close()
			code, stderr := p.wait(t)
			if code != 1 || !strings.Contains(stderr, "write the summary to stdout: ") || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, want 1 with the stdout error (%s):\n%s", code, tc.want, stderr)
			}
			if got := readJSON(t, jsonPath)["completed"]; got != 4.0 {
				t.Errorf("completed = %v, want 4", got)
			}
			if got := countSamples(t, samples); got != 4 {
				t.Errorf("samples: %d, want 4", got)
			}
		})
	}
}

// TestRow14_SignalsProcess: SIGINT exits 130 and SIGTERM 143, with the
// requests in flight counted as interrupted (not failed), the JSON marked
// interrupted and both files written.
func TestRow14_SignalsProcess(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		name string
	}{
		{syscall.SIGINT, 130, "SIGINT"},
		{syscall.SIGTERM, 143, "SIGTERM"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeVLLM{tokens: 50, stallAfter: 3}
			base := f.start(t)
			dir := t.TempDir()
			jsonPath, samples := filepath.Join(dir, "r.json"), filepath.Join(dir, "s.jsonl")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p := startProcess(t, ctx, io.Discard, "run", "--quiet", "--target", base, "--concurrency", "2", "--requests", "10", "--warmup", "0",
				"--json", jsonPath, "--samples", samples)
			for range 2 {
				select {
				case <-f.inFlight:
				case <-ctx.Done():
					t.Fatal("the requests never arrived")
				}
			}
			if err := p.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			code, stderr := p.wait(t)
			if code != tc.code || !strings.Contains(stderr, "interrupted ("+tc.name+") after 2 requests (2 cut short, counted apart from failures)") {
				t.Fatalf("exit %d, want %d with the interruption named:\n%s", code, tc.code, stderr)
			}
			got := readJSON(t, jsonPath)
			if got["interrupted"] != true || got["interrupted_requests"] != 2.0 || got["failed"] != 0.0 {
				t.Errorf("interrupted %v interrupted_requests %v failed %v, want true, 2, 0", got["interrupted"], got["interrupted_requests"], got["failed"])
			}
			if n := countSamples(t, samples); n != 2 {
				t.Errorf("samples: %d, want 2", n)
			}
		})
	}
}

// needDocker skips without a Docker engine, except under CI=true.
func needDocker(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := server.DockerAvailable(ctx); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Docker is required under CI=true: %v (start dockerd)", err)
		}
		t.Skipf("no Docker engine (%v): skipping the container path; install docker.io and start dockerd to run it", err)
	}
}

// readyLine is the container backend's log line once the server answers.
var readyLine = regexp.MustCompile(`ready in \S+ at (http://\S+) \(container ([0-9a-f]{12})\)`)

// containerGone reports whether no container with the id prefix exists
// (running or not).
func containerGone(t *testing.T, id string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("id", id)})
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Items) == 0
}

// TestSIGINTDuringContainerRun: SIGINT while a simulator container serves
// the run (tokens every 50 ms, requests in flight) gives partial results
// (exit 130, the JSON marked interrupted) and removes the container.
func TestSIGINTDuringContainerRun(t *testing.T) {
	testphase.Fault(t)
	needDocker(t)
	dir := t.TempDir()
	jsonPath, samples := filepath.Join(dir, "r.json"), filepath.Join(dir, "s.jsonl")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	p := startProcess(t, ctx, io.Discard, "run", "--image", "sim", "--profile", "testdata/profile-slow.yaml", "--concurrency", "2", "--requests", "20",
		"--max-tokens", "400", "--warmup", "0", "--json", jsonPath, "--samples", samples)
	m := p.waitLine(t, readyLine, 3*time.Minute)
	base, id := m[1], m[2]
	t.Cleanup(func() {
		if !containerGone(t, id) {
			t.Errorf("container %s left behind", id)
		}
	})
	// Wait until the server runs requests, then interrupt.
	waitRunning(t, ctx, base)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, stderr := p.wait(t)
	if code != 130 || !strings.Contains(stderr, "interrupted (SIGINT) after ") {
		t.Fatalf("exit %d, want 130 with the interruption named:\n%s", code, stderr)
	}
	got := readJSON(t, jsonPath)
	if got["interrupted"] != true || got["interrupted_requests"].(float64) < 1 || got["failed"] != 0.0 {
		t.Errorf("interrupted %v interrupted_requests %v failed %v, want true, ≥1, 0", got["interrupted"], got["interrupted_requests"], got["failed"])
	}
	if n := countSamples(t, samples); n < 1 {
		t.Errorf("samples: %d, want the partial run's", n)
	}
	if !containerGone(t, id) {
		t.Errorf("container %s still exists after the interrupted run", id)
	}
}

// TestContainerDiesMidRunCLI: a simulator container whose engine dies
// after five requests: the run fails (exit 1) naming the server as down
// with its last log lines, and the container is removed.
func TestContainerDiesMidRunCLI(t *testing.T) {
	testphase.Fault(t)
	needDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	r := runCLI(t, ctx, "run", "--image", "sim", "--profile", "testdata/profile-dies.yaml", "--concurrency", "2", "--requests", "30",
		"--max-tokens", "4", "--warmup", "0")
	r.wantCode(t, 1, "server no longer healthy: /health answered 503", "EngineCore died after 5 requests", "is above --max-error-rate 0%")
	m := readyLine.FindStringSubmatch(r.stderr)
	if m == nil {
		t.Fatalf("no ready line with the container id:\n%s", r.stderr)
	}
	if !containerGone(t, m[2]) {
		t.Errorf("container %s left behind", m[2])
	}
}

// waitRunning waits until the server at base runs a request (its
// num_requests_running gauge at 1 or more), so that a signal sent next
// lands mid-load; it fails t when ctx ends first.
func waitRunning(t *testing.T, ctx context.Context, base string) {
	t.Helper()
	sc := scrape.NewScraper(base + "/metrics")
	for {
		snap, err := sc.Scrape(ctx)
		if err != nil {
			t.Fatalf("scrape the server: %v", err)
		}
		if n, err := snap.Gauge(scrape.NumRequestsRunning); err == nil && n >= 1 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatal("the run never reached the server")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
