package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/vllmperf/vllmperf/internal/target/server/owner"
)

// Leftovers: a process stopped by SIGKILL (or a second signal, or a
// crash) cannot remove its containers, and the lease it held on their
// GPUs (package lease) dies with it, so the next start would put a second
// server on GPUs the leftover still holds. Every container start
// therefore looks first, once it holds its lease, for managed containers
// of other processes: one whose owner (owner.Label) is gone is removed,
// with a line naming it; one whose owner runs, or cannot be looked up
// (another host, no owner label), is named and left alone, and when it
// holds GPUs this start would use, the start fails rather than share them.

// leftover is a managed container that another process started.
type leftover struct {
	id, image string
	created   time.Time
	owner     owner.ID
	ownerErr  error // no owner label, or one that does not parse
	state     owner.Liveness
}

// String names the container, its image, age and owner, for a line.
func (l leftover) String() string {
	who := l.owner.Describe() + ", " + l.state.String()
	if l.ownerErr != nil {
		who = "not recorded (" + l.ownerErr.Error() + ")"
	}
	return fmt.Sprintf("container %.12s (image %s, created %s ago, owner %s)", l.id, l.image, time.Since(l.created).Round(time.Second), who)
}

// newLeftover reads a listed container's labels.
func newLeftover(c container.Summary) leftover {
	l := leftover{id: c.ID, image: c.Image, created: time.Unix(c.Created, 0)}
	v, ok := c.Labels[owner.Label]
	if !ok {
		l.ownerErr = errors.New("no " + owner.Label + " label: an older vllmperf or a hand-made container")
		return l
	}
	if l.owner, l.ownerErr = owner.Parse(v); l.ownerErr == nil {
		l.state = l.owner.Check()
	}
	return l
}

// findLeftovers lists the managed containers that other processes
// started (this process's own are excluded: upgrade-gate runs two servers
// at once).
func findLeftovers(ctx context.Context, cli *testcontainers.DockerClient) ([]leftover, error) {
	res, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", labelManaged+"=true")})
	if err != nil {
		return nil, fmt.Errorf("docker: list containers: %w", err)
	}
	var out []leftover
	for _, c := range res.Items {
		if c.Labels[owner.Label] == owner.Self().String() || c.Labels[labelSession] == session() {
			continue
		}
		out = append(out, newLeftover(c))
	}
	return out, nil
}

// ReapLeftovers removes the managed containers whose owning process is
// gone (killed before it could remove them), logging a line naming each
// (image, age, owner), and names the ones it leaves alone (owner alive, or
// not known). It returns the containers left alone. Every container start
// of the container backend runs it; vllmperf perf-gate runs it after its
// go test child was stopped.
func ReapLeftovers(ctx context.Context, logf func(format string, args ...any)) (kept []string, err error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	defer cli.Close()
	left, err := reapLeftovers(ctx, cli, logf)
	for _, l := range left {
		kept = append(kept, l.id)
	}
	return kept, err
}

// reapLeftovers is ReapLeftovers on a client; it returns what it kept.
func reapLeftovers(ctx context.Context, cli *testcontainers.DockerClient, logf func(format string, args ...any)) ([]leftover, error) {
	found, err := findLeftovers(ctx, cli)
	if err != nil {
		return nil, err
	}
	var kept []leftover
	var errs []error
	for _, l := range found {
		if l.state != owner.Gone {
			logf("vllm: leftover %s: left alone (only a container whose owner is gone is removed; docker rm -f %.12s removes it)", l, l.id)
			kept = append(kept, l)
			continue
		}
		if _, err := cli.ContainerRemove(ctx, l.id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
			errs = append(errs, fmt.Errorf("remove leftover %s: %w", l, err))
			kept = append(kept, l)
			continue
		}
		logf("vllm: removed leftover %s: its owner was stopped before it could remove it", l)
	}
	return kept, errors.Join(errs...)
}

// isNotFound says whether err is Docker's "no such container", or its
// "removal ... is already in progress": another process's start removes it.
func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "no such container") || strings.Contains(msg, "already in progress")
}

// gpusOf reads the GPUs a container's device requests ask for.
func gpusOf(hc *container.HostConfig) gpuSelection {
	var g gpuSelection
	if hc == nil {
		return g
	}
	for _, d := range hc.DeviceRequests {
		if !slices.ContainsFunc(d.Capabilities, func(c []string) bool { return slices.Contains(c, "gpu") }) {
			continue
		}
		if len(d.DeviceIDs) == 0 { // Count -1 (all), or a count of unnamed ones
			return gpuSelection{All: true}
		}
		g.IDs = append(g.IDs, d.DeviceIDs...)
	}
	return g
}

// overlaps says whether two GPU selections share a GPU; "all" shares with
// any selection that has one.
func overlaps(g, o gpuSelection) bool {
	switch {
	case !g.All && len(g.IDs) == 0, !o.All && len(o.IDs) == 0:
		return false
	case g.All || o.All:
		return true
	}
	return slices.ContainsFunc(g.IDs, func(id string) bool { return slices.Contains(o.IDs, id) })
}

// clearLeftovers runs before a container start, its lease held: it
// removes what killed processes left, and fails when a container it keeps
// holds a GPU of want (a GPU is never shared silently).
func clearLeftovers(ctx context.Context, s settings, want gpuSelection) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	defer cli.Close()
	kept, err := reapLeftovers(ctx, cli, s.logf)
	if err != nil {
		return err
	}
	for _, l := range kept {
		if !want.All && len(want.IDs) == 0 {
			break
		}
		res, err := cli.ContainerInspect(ctx, l.id, client.ContainerInspectOptions{})
		if isNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("docker: inspect leftover %.12s: %w", l.id, err)
		}
		if held := gpusOf(res.Container.HostConfig); overlaps(held, want) {
			return fmt.Errorf("GPUs %s: leftover %s holds GPUs %s; not sharing them: stop its owner, or remove it (docker rm -f %.12s)", want, l, held, l.id)
		}
	}
	return nil
}
