package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/vllmperf/vllmperf/internal/target/server/owner"
	"github.com/vllmperf/vllmperf/internal/target/server/simbuild"
)

// Labels on every container this package starts, so that a leak is found
// with `docker ps -a --filter label=org.vllmperf.managed=true`.
const (
	labelManaged = "org.vllmperf.managed"
	labelProfile = "org.vllmperf.profile" // the profile's name
	labelSession = "org.vllmperf.session" // the starting process (session)
)

// DockerAvailable reports whether a Docker engine answers, with the reason

// EnvJob names the job on the containers this process starts (labelled
// owner.JobLabel; package envvar declares it).
var EnvJob = owner.EnvJob

// Job is the job's name: EnvJob, or this process's owner value.
func Job() string { return owner.Job() }

// when not.
func DockerAvailable(ctx context.Context) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Ping(ctx, client.PingOptions{})
	return err
}

var (
	sessionOnce sync.Once
	sessionID   string
)

// session is this process's session id, put on every container it starts
// (labelSession) so that reap can remove exactly this process's leftovers.
func session() string {
	sessionOnce.Do(func() {
		sessionID = fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	})
	return sessionID
}

// listManaged lists the ids of containers (running or not) that carry
// labelManaged, and labelSession=sess when sess is not empty.
func listManaged(ctx context.Context, sess string) ([]string, error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	defer cli.Close()
	f := make(client.Filters).Add("label", labelManaged+"=true")
	if sess != "" {
		f = f.Add("label", labelSession+"="+sess)
	}
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("docker: list containers: %w", err)
	}
	var ids []string
	for _, c := range res.Items {
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// reap force-removes the containers listManaged finds: the ones an
// interrupted or killed run left behind. It returns how many it removed.
func reap(ctx context.Context, sess string) (int, error) {
	ids, err := listManaged(ctx, sess)
	if err != nil {
		return 0, err
	}
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return 0, fmt.Errorf("docker: %w", err)
	}
	defer cli.Close()
	var errs []error
	n := 0
	for _, id := range ids {
		if _, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil {
			errs = append(errs, fmt.Errorf("remove %.12s: %w", id, err))
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// RemoveOwn force-removes every container this process started that is
// still there: what a process stopped by a signal runs before it exits
// (vllmperf's second signal, a test binary's TestMain), so that no
// container outlives it even when its servers were not closed. It returns
// how many it removed.
// A process that never started one does not ask Docker.
func RemoveOwn(ctx context.Context) (int, error) {
	if !startedContainer.Load() {
		return 0, nil
	}
	// A Close under way (its stop waits for the container) makes a
	// removal fail or miss it: try again until none is left.
	total := 0
	for {
		n, err := reap(ctx, session())
		total += n
		left, lerr := listManaged(ctx, session())
		if lerr == nil && len(left) == 0 {
			return total, nil
		}
		select {
		case <-ctx.Done():
			return total, errors.Join(err, lerr, fmt.Errorf("%d container(s) still there: %w", len(left), ctx.Err()))
		case <-time.After(removeRetry):
		}
	}
}

// removeRetry is how soon RemoveOwn tries again.
const removeRetry = 200 * time.Millisecond

// startedContainer is set before this process's first container start.
var startedContainer atomic.Bool

// ensureImage pulls img when it is not local, so that the pull (minutes
// for a vLLM image) is not counted in the time to ready.
func ensureImage(ctx context.Context, s settings, img string) error {
	if ok, err := simbuild.Exists(ctx, img); err != nil || ok {
		return err
	}
	provider, err := testcontainers.NewDockerProvider(testcontainers.WithLogger(redactLogger{s}))
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	defer provider.Close()
	begin := time.Now()
	s.logf("vllm container: pulling %s (not counted in the time to ready)", img)
	if err := provider.PullImage(ctx, img); err != nil {
		return fmt.Errorf("pull %s: %w (pull it beforehand with docker pull, or set %s to a local image)", img, err, envImage)
	}
	s.logf("vllm container: pulled %s in %s", img, time.Since(begin).Round(time.Second))
	return nil
}

// reaperHint explains a failure of testcontainers' reaper (Ryuk), which
// runs as a container of its own: where its image cannot be pulled (a
// machine without Docker Hub, or inside a container) testcontainers cannot
// start. The hint names the setting that turns it off; this package
// removes its containers itself (Close, on every failed start).
func reaperHint(err error) string {
	if err == nil || !strings.Contains(strings.ToLower(err.Error()), "reaper") {
		return ""
	}
	return "testcontainers' reaper (Ryuk) could not start; where its image cannot be pulled, set TESTCONTAINERS_RYUK_DISABLED=true (vllmperf removes its containers itself)"
}
