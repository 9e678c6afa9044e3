package server

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/vllmperf/vllmperf/internal/target/server/owner"
	"github.com/vllmperf/vllmperf/internal/target/server/simbuild"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// TestReapLeftovers: of the managed containers other processes left, the
// one whose owner exited is removed with a line naming it (image, age,
// owner); the one whose owner still runs is named and left alone, and a
// start that wants the GPUs it holds fails rather than share them. The
// containers are created, not started, and carry this test's own job
// label: the test touches nothing else on the engine.
func TestReapLeftovers(t *testing.T) {
	testphase.Fault(t)
	needDocker(t)
	if runtime.GOOS != "linux" {
		t.Skip("owners are looked up in /proc (Linux); elsewhere no leftover is removed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	img, err := simbuild.EnsureSim(ctx, os.Getenv(envSimBinary), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	job := fmt.Sprintf("reap-test-%d-%d", os.Getpid(), time.Now().UnixNano())

	exited := exec.Command(os.Args[0], "-test.run=^$")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	alive := exec.Command(os.Args[0], "-test.run=^TestSleepHelper$")
	alive.Env = append(os.Environ(), envSleepHelper+"=1")
	if err := alive.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = alive.Process.Kill(); _ = alive.Wait() })
	aliveStart, _ := owner.ProcessStart(alive.Process.Pid)
	gone := owner.ID{Host: owner.Self().Host, NS: owner.Self().NS, PID: exited.ProcessState.Pid()}
	live := owner.ID{Host: owner.Self().Host, NS: owner.Self().NS, PID: alive.Process.Pid, Start: aliveStart}

	create := func(o owner.ID, hc *container.HostConfig) string {
		t.Helper()
		res, err := cli.ContainerCreate(ctx, client.ContainerCreateOptions{
			Config:     &container.Config{Image: img, Labels: map[string]string{labelManaged: "true", owner.Label: o.String(), owner.JobLabel: job}},
			HostConfig: hc,
		})
		if err != nil {
			t.Fatalf("create a leftover: %v", err)
		}
		t.Cleanup(func() {
			_, _ = cli.ContainerRemove(context.Background(), res.ID, client.ContainerRemoveOptions{Force: true})
		})
		return res.ID
	}
	goneID := create(gone, nil)
	liveID := create(live, &container.HostConfig{Resources: container.Resources{DeviceRequests: []container.DeviceRequest{{Count: -1, Capabilities: [][]string{{"gpu"}}}}}})

	var mu sync.Mutex
	var lines []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, fmt.Sprintf(format, args...))
	}
	err = clearLeftovers(ctx, settings{log: logWriter{logf}}, gpuSelection{All: true})
	if err == nil || !strings.Contains(err.Error(), liveID[:12]) || !strings.Contains(err.Error(), "not sharing them") {
		t.Errorf("a start on every GPU beside a live owner's GPU container: %v; want it refused, naming %.12s", err, liveID)
	}
	if err := clearLeftovers(ctx, settings{log: logWriter{logf}}, gpuSelection{}); err != nil {
		t.Errorf("a start without GPUs: %v, want it to go ahead", err)
	}
	if exists(t, cli, goneID) {
		t.Errorf("container %.12s of an exited owner was not removed", goneID)
	}
	if !exists(t, cli, liveID) {
		t.Errorf("container %.12s of a live owner was removed", liveID)
	}
	all := strings.Join(lines, "\n")
	wantGone := fmt.Sprintf("removed leftover container %.12s (image %s, created ", goneID, img)
	// Another process's start may reap it first (make test runs packages
	// side by side); then the line is theirs, and the container gone all
	// the same.
	if !strings.Contains(all, wantGone) || !strings.Contains(all, gone.Describe()+", gone") {
		t.Logf("no removal line of ours for %.12s (another process's start removed it first?):\n%s", goneID, all)
	}
	if want := fmt.Sprintf("leftover container %.12s", liveID); !strings.Contains(all, want) || !strings.Contains(all, live.Describe()+", alive): left alone") {
		t.Errorf("no line naming the live owner's container as left alone:\n%s", all)
	}
}

// envSleepHelper makes TestSleepHelper sleep: a live owner for
// TestReapLeftovers.
const envSleepHelper = "VLLMPERF_SLEEP_HELPER"

// TestSleepHelper sleeps a minute when envSleepHelper is set (as a child
// of TestReapLeftovers, killed at its end); run directly it does nothing.
func TestSleepHelper(t *testing.T) {
	if os.Getenv(envSleepHelper) == "" {
		return
	}
	time.Sleep(time.Minute)
}

// exists says whether the container is still on the engine.
func exists(t *testing.T, cli *testcontainers.DockerClient, id string) bool {
	t.Helper()
	res, err := cli.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("id", id)})
	if err != nil {
		t.Fatal(err)
	}
	return len(res.Items) > 0
}

// logWriter turns settings' log lines into logf calls.
type logWriter struct{ logf func(string, ...any) }

func (w logWriter) Write(p []byte) (int, error) {
	w.logf("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
