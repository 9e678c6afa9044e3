package perf_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// Labels and settings TestSignalsLeaveNoContainer filters and sets by.
const (
	labelJob     = "org.vllmperf.job" // every container of one job (server.EnvJob)
	envLockDir   = "VLLMPERF_LOCK_DIR"
	devicesLease = "devices.lock" // the lease a GPU-less container start holds
	// leftoverWait is how long after a stopped command returns its
	// containers may take to go: the 10 s.
	leftoverWait = 10 * time.Second
)

// TestSignalsLeaveNoContainer stops each level that starts containers
// (make perf-gate, whose vllmperf runs go test; go test -bench Perf
// itself; make upgrade-gate's vllmperf) with SIGTERM and with SIGINT sent
// to its process group, as timeout and Ctrl-C do, once a simulator
// container is up and serving a request. Within 10 s after the command
// returns, no container of its job is left, no process of its group runs,
// and the GPU lease is free. Each case has a job label and a lease folder
// of its own, so that it asserts only about what it started.
func TestSignalsLeaveNoContainer(t *testing.T) {
	testphase.Fault(t)
	testphase.Alone(t)
	testphase.Lane(t, testphase.LaneContainers)
	if testing.Short() {
		t.Skip("runs make and go test processes with containers")
	}
	if err := server.DockerAvailable(t.Context()); err != nil {
		skipWithoutDocker(t, fmt.Errorf("%w: %v", server.ErrNoDocker, err))
	}
	sim := []string{"VLLMPERF_BACKEND=container", "VLLMPERF_IMAGE=sim", "VLLMPERF_GPUS=none"}
	levels := []struct {
		name string
		cmd  []string
		env  func(dir string) []string
		says func(sig string) string // a line the stopped command prints; "" for none
	}{
		// vllmperf perf-gate under make, running go test -bench Perf
		{"make perf-gate", []string{"make", "--no-print-directory", "perf-gate"}, func(dir string) []string {
			return gateEnv(filepath.Join(dir, "store"), filepath.Join(dir, "res"), append([]string{"VLLMPERF_COUNT=3"}, sim...)...)
		}, func(sig string) string {
			return "vllmperf: interrupted (" + sig + "): go test -bench Perf stopped; nothing gated"
		}},
		// the suite under go test, as a user runs it
		{"go test", []string{"go", "test", "-count=1", "-run", "^$", "-bench", "Perf", "-benchtime", "1x", "-count", "3", "."}, func(dir string) []string {
			return gateEnv(filepath.Join(dir, "store"), filepath.Join(dir, "res"), sim...)
		}, func(sig string) string {
			if sig == "SIGTERM" {
				return "" // go test itself dies of SIGTERM: its test binary's lines go nowhere
			}
			return "vllmperf suite: SIGINT: removing what this process started"
		}},
		// vllmperf upgrade-gate under make, both sides the simulator image
		{"make upgrade-gate", []string{"make", "--no-print-directory", "upgrade-gate", "UPGRADE_ARGS=--size quick"}, func(dir string) []string {
			return append(os.Environ(), "OLD=sim", "NEW=sim", "OLD_SIM_ARGS=", "NEW_SIM_ARGS=", "POINTS=profile=basic/scenario=ttft-tpot/prompt=short/conc=1",
				"MAX_PAIRS=20", "SERVERS=", "UPGRADE_RESULTS="+filepath.Join(dir, "upgrade"), "VLLMPERF_GPUS=none")
		}, func(sig string) string { return "vllmperf: interrupted (" + sig + "): upgrade gate: " }},
	}
	for _, lv := range levels {
		for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
			t.Run(lv.name+"/"+sigName(sig), func(t *testing.T) {
				dir := t.TempDir()
				job := fmt.Sprintf("signals-test-%d-%d", os.Getpid(), time.Now().UnixNano())
				env := append(lv.env(dir), server.EnvJob+"="+job, envLockDir+"="+filepath.Join(dir, "leases"))
				out := stopLevel(t, lv.cmd, env, job, sig, filepath.Join(dir, "leases", devicesLease))
				if want := lv.says(sigName(sig)); !strings.Contains(out, want) {
					t.Errorf("the output lacks %q:\n%s", want, out)
				}
			})
		}
	}
}

// sigName is SIGTERM or SIGINT.
func sigName(s syscall.Signal) string {
	if s == syscall.SIGINT {
		return "SIGINT"
	}
	return "SIGTERM"
}

// stopLevel runs argv in a process group of its own, waits for a
// container of job to serve a request, signals the group, and checks what
// is left; it returns the command's output.
func stopLevel(t *testing.T, argv, env []string, job string, sig syscall.Signal, lease string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var out syncBuffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		// What this case started, should the test have failed before
		// the signal: by its own job label only.
		for _, id := range jobContainers(t, cli, job) {
			_, _ = cli.ContainerRemove(context.Background(), id, client.ContainerRemoveOptions{Force: true})
		}
	})
	// A container of the job up, a request running on it.
	id, err := waitServing(ctx, cli, job, exited)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	t.Logf("%s: container %.12s serving; sending %s to the process group", strings.Join(argv, " "), id, sigName(sig))
	if err := syscall.Kill(-pgid, sig); err != nil {
		t.Fatal(err)
	}
	select {
	case err = <-exited:
	case <-ctx.Done():
		t.Fatalf("%s did not end after %s:\n%s", argv[0], sigName(sig), out.String())
	}
	returned := time.Now()
	t.Logf("%s returned %v", argv[0], err)
	// Within leftoverWait: no container of the job, no process of the group.
	var left []string
	groupGone := false
	for {
		left = jobContainers(t, cli, job)
		groupGone = errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
		if (len(left) == 0 && groupGone) || time.Since(returned) > leftoverWait {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("%s: %d container(s) of the job left %s after it returned: %v\n%s", sigName(sig), len(left), leftoverWait, left, out.String())
	}
	if !groupGone {
		t.Errorf("%s: processes of the group still run %s after it returned", sigName(sig), leftoverWait)
	}
	// The lease on the devices is free: a start could take it now.
	f, err := os.OpenFile(lease, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("the devices lease is still held after the stop: %v", err)
	}
	return out.String()
}

// waitServing waits for a running container of job to have a request
// running (its /metrics), and returns its id; exited ends the wait.
func waitServing(ctx context.Context, cli *testcontainers.DockerClient, job string, exited <-chan error) (string, error) {
	for {
		select {
		case err := <-exited:
			return "", fmt.Errorf("the command ended (%v) before a container of its job served a request", err)
		case <-ctx.Done():
			return "", errors.New("no container of the job served a request in time")
		case <-time.After(100 * time.Millisecond):
		}
		res, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: make(client.Filters).Add("label", labelJob+"="+job)})
		if err != nil {
			return "", err
		}
		for _, c := range res.Items {
			for _, p := range c.Ports {
				if p.PrivatePort != 8000 || p.PublicPort == 0 {
					continue
				}
				snap, err := scrape.NewScraper("http://127.0.0.1:" + strconv.Itoa(int(p.PublicPort)) + "/metrics").Scrape(ctx)
				if err != nil {
					continue // not ready yet
				}
				if n, err := snap.Gauge(scrape.NumRequestsRunning); err == nil && n >= 1 {
					return c.ID, nil
				}
			}
		}
	}
}

// jobContainers lists the ids of job's containers, running or not.
func jobContainers(t *testing.T, cli *testcontainers.DockerClient, job string) []string {
	t.Helper()
	res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", labelJob+"="+job)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range res.Items {
		ids = append(ids, c.ID[:12])
	}
	return ids
}

// syncBuffer is a bytes.Buffer that a command writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
