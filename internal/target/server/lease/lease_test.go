package lease

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestContainerLocks: which lease files a container start holds, by GPU
// selection.
func TestContainerLocks(t *testing.T) {
	tests := []struct {
		name string
		gpus string
		want []string // name:mode
	}{
		// Every GPU: the whole devices lease.
		{"all", "all", []string{"devices.lock:x"}},
		// No GPU (the simulator image standing for vLLM): one at a time too.
		{"none", "none", []string{"devices.lock:x"}},
		// Device ids: a Shared hold on the devices, each id exclusively,
		// sorted so that two starts take them in the same order.
		{"ids", "1,0", []string{"devices.lock:s", "gpu-0.lock:x", "gpu-1.lock:x"}},
		// A UUID is kept readable; anything else becomes '_'.
		{"uuid", "GPU-5f3c/a", []string{"devices.lock:s", "gpu-GPU-5f3c_a.lock:x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := testGPUs(tc.gpus)
			require.NoError(t, err)
			var got []string
			for _, l := range ContainerLocks(g) {
				got = append(got, l.name+":"+map[Mode]string{Shared: "s", Exclusive: "x"}[l.mode])
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestLeaseConflicts: which holds exclude which, within one process.
func TestLeaseConflicts(t *testing.T) {
	t.Setenv(envLockDir, t.TempDir())
	sel := func(s string) []Spec { g, err := testGPUs(s); require.NoError(t, err); return ContainerLocks(g) }
	tests := []struct {
		name        string
		first, then []Spec
		conflict    bool
	}{
		{"all then all", sel("all"), sel("all"), true},
		{"all then one GPU", sel("all"), sel("0"), true},
		{"one GPU then all", sel("0"), sel("all"), true},
		{"GPU 0 then GPU 1", sel("0"), sel("1"), false},
		{"GPUs 0,1 then GPU 1", sel("0,1"), sel("1"), true},
		{"one target then the same", TargetLocks(context.Background(), "http://127.0.0.1:8000"), TargetLocks(context.Background(), "http://127.0.0.1:8000"), true},
		{"two targets", TargetLocks(context.Background(), "http://127.0.0.1:8000"), TargetLocks(context.Background(), "http://127.0.0.1:8001"), false},
		// localhost and 127.0.0.1 are one server: one lock.
		{"localhost then 127.0.0.1", TargetLocks(context.Background(), "http://localhost:8000"), TargetLocks(context.Background(), "http://127.0.0.1:8000"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, err := Acquire(context.Background(), tc.first, "first", t.Logf, nil)
			require.NoError(t, err)
			defer first.Release()
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			second, err := Acquire(ctx, tc.then, "second", t.Logf, nil)
			second.Release()
			if !tc.conflict {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
			assert.Contains(t, err.Error(), "one server per GPU set")
		})
	}
}

// TestLeaseWaitsForRelease: a start whose lease is held waits, and goes
// on as soon as the holder gives it back.
func TestLeaseWaitsForRelease(t *testing.T) {
	t.Setenv(envLockDir, t.TempDir())
	first, err := Acquire(context.Background(), TargetLocks(context.Background(), "http://x"), "first", t.Logf, nil)
	require.NoError(t, err)
	released := make(chan time.Time, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		released <- time.Now()
		first.Release()
	}()
	second, err := Acquire(context.Background(), TargetLocks(context.Background(), "http://x"), "second", t.Logf, nil)
	got := time.Now()
	require.NoError(t, err)
	defer second.Release()
	assert.False(t, got.Before(<-released), "the second lease was granted before the first was released")
}

// TestLeaseAcrossProcesses: a lease held by another process (this test
// binary, re-run as a helper) keeps this one waiting, and its holder line
// says who holds it.
func TestLeaseAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(envLockDir, dir)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestLeaseHelperProcess$")
	cmd.Env = append(os.Environ(), "VLLMPERF_LEASE_HELPER=1", envLockDir+"="+dir)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held\n", line)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = Acquire(ctx, ContainerLocks(GPUs{All: true}), "parent", t.Logf, nil)
	require.Error(t, err, "another process holds every GPU")
	assert.Contains(t, err.Error(), "held by pid ")
	assert.Contains(t, err.Error(), "profile helper")

	require.NoError(t, stdin.Close()) // the helper releases and exits
	l, err := Acquire(context.Background(), ContainerLocks(GPUs{All: true}), "parent", t.Logf, nil)
	require.NoError(t, err)
	l.Release()
}

// TestLeaseHelperProcess holds every GPU's lease until its stdin closes;
// it does nothing unless run by TestLeaseAcrossProcesses.
func TestLeaseHelperProcess(t *testing.T) {
	if os.Getenv("VLLMPERF_LEASE_HELPER") != "1" {
		t.Skip("a helper process of TestLeaseAcrossProcesses")
	}
	l, err := Acquire(context.Background(), ContainerLocks(GPUs{All: true}), Holder("container", "helper"), t.Logf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	os.Stdout.WriteString("held\n")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
}

// testGPUs reads a selection the way VLLMPERF_GPUS spells it (server's
// parseGPUs checks the variable itself): all, none or "", or ids.
func testGPUs(list string) (GPUs, error) {
	switch strings.ToLower(strings.TrimSpace(list)) {
	case "all":
		return GPUs{All: true}, nil
	case "", "none":
		return GPUs{}, nil
	}
	return GPUs{IDs: strings.Split(list, ",")}, nil
}
