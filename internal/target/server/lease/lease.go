// Package lease keeps servers apart: one load per server, one server per
// GPU set, at a time, across processes, with advisory file locks. The
// server package's container and external backends hold a Lease from a
// start until Close.
package lease

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// One load per server, one server per GPU set, at a time: a vLLM container
// asks for most of its GPUs' memory, so two on one GPU fail or starve each
// other, and two loads on one deployment move each other's counters. The
// container and external backends therefore hold a lease on what their
// server uses from the start until Close: the GPUs (a container), or the
// target (an external deployment). Leases are advisory file locks
// (flock(2)) under leaseDir, so the guarantee holds across processes too:
// `go test ./...` runs packages in parallel processes, and two of them
// must not start vLLM on the same GPUs together. A start whose lease is
// held waits for it (logging who holds it) until its context ends. The
// in-process simulator takes no lease: its servers share nothing.

// envLockDir overrides where the lease files live (default: a folder in
// the system's temporary directory, shared by every process of the user).
var envLockDir = envvar.LockDir.Name

// leaseLogInterval is how often a waiting start says it still waits.
const leaseLogInterval = 30 * time.Second

// leaseDir is the folder of the lease files.
func leaseDir() string {
	if d := strings.TrimSpace(os.Getenv(envLockDir)); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "vllmperf-leases")
}

// Mode is how a lease file is held.
type Mode int

// The modes: Shared holds may overlap, an Exclusive one excludes every
// other.
const (
	Shared Mode = iota
	Exclusive
)

// Spec is one lease file and how it is held.
type Spec struct {
	name string // file name under leaseDir
	mode Mode
	what string // what it guards, for messages ("every GPU", "GPU 0")
}

// The lease on the devices: every container start holds the devices file,
// exclusively when it takes every GPU (or none: the GPU-less simulator
// image stands for a vLLM container on a runner), shared when it names
// device ids, each of which it then holds exclusively.
const devicesLock = "devices.lock"

// ContainerLocks lists the locks a container with gpus holds, in the
// order they are taken (always the same order: no two starts deadlock).
func ContainerLocks(gpus GPUs) []Spec {
	if gpus.All || len(gpus.IDs) == 0 {
		return []Spec{{name: devicesLock, mode: Exclusive, what: "this machine's GPUs (" + gpus.String() + ")"}}
	}
	out := []Spec{{name: devicesLock, mode: Shared, what: "this machine's GPUs"}}
	ids := slices.Clone(gpus.IDs)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		out = append(out, Spec{name: "gpu-" + fileSafe(id) + ".lock", mode: Exclusive, what: "GPU " + id})
	}
	return out
}

// fileSafe keeps letters, digits, '-' and '.' of s (a GPU id or UUID).
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return '_'
	}, s)
}

// Lease is a set of held locks; Release gives them back.
type Lease struct{ files []*os.File }

// Release unlocks and closes every file; it is safe on a nil lease and
// more than once.
func (l *Lease) Release() {
	if l == nil {
		return
	}
	for i := len(l.files) - 1; i >= 0; i-- {
		unlockFile(l.files[i])
		l.files[i].Close()
	}
	l.files = nil
}

// Acquire takes every lock of specs in order, waiting while another
// server holds one, until ctx ends. holder describes this start in the
// files it holds exclusively, so that a waiting start can say who it
// waits for. logf hears about a wait; waited, when not nil, is told how
// long taking them all took.
func Acquire(ctx context.Context, specs []Spec, holder string, logf func(format string, args ...any), waited func(time.Duration)) (*Lease, error) {
	dir := leaseDir()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("lease folder %s: %w (set %s to a writable folder)", dir, err, envLockDir)
	}
	l, begin := &Lease{}, time.Now()
	for _, spec := range specs {
		f, err := lockWaiting(ctx, logf, filepath.Join(dir, spec.name), spec, holder)
		if err != nil {
			l.Release()
			return nil, err
		}
		l.files = append(l.files, f)
	}
	if waited != nil {
		waited(time.Since(begin))
	}
	return l, nil
}

// File is the spec's lease file name, under the lease folder.
func (s Spec) File() string { return s.name }

// Mode is how the spec's file is held.
func (s Spec) Mode() Mode { return s.mode }

// lockWaiting opens and locks one lease file, waiting while it is held.
// The wait is the kernel's (a blocking flock in its own goroutine), so a
// waiter is woken as soon as the holder lets go, and a holder that frees
// and takes the lease again in a loop cannot starve it. If ctx ends first
// the goroutine lets go of the lock as soon as it gets it.
func lockWaiting(ctx context.Context, logf func(format string, args ...any), path string, spec Spec, holder string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w (set %s to a writable folder)", path, err, envLockDir)
	}
	got := func() (*os.File, error) {
		if spec.mode == Exclusive {
			writeHolder(f, holder)
		}
		return f, nil
	}
	ok, err := tryLock(f, spec.mode)
	switch {
	case err != nil:
		f.Close()
		return nil, fmt.Errorf("lease %s: %w", path, err)
	case ok:
		return got()
	}
	begin := time.Now()
	logf("vllm: waiting for %s: one server per GPU set and one load per server at a time; held by %s", spec.what, readHolder(path))
	done := make(chan error, 1)
	go func() { done <- waitLock(f, spec.mode) }()
	tick := time.NewTicker(leaseLogInterval)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("lease %s: %w", path, err)
			}
			logf("vllm: got %s after waiting %s", spec.what, time.Since(begin).Round(time.Millisecond))
			return got()
		case <-tick.C:
			logf("vllm: still waiting for %s (%s so far); held by %s", spec.what, time.Since(begin).Round(time.Second), readHolder(path))
		case <-ctx.Done():
			go func() { // give the lock back the moment the wait ends
				if <-done == nil {
					unlockFile(f)
				}
				f.Close()
			}()
			return nil, fmt.Errorf("waiting for %s (held by %s; one server per GPU set and one load per server at a time): %w", spec.what, readHolder(path), context.Cause(ctx))
		}
	}
}

// writeHolder records who holds an Exclusive lease, for waiting starts.
func writeHolder(f *os.File, holder string) {
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(holder+"\n"), 0)
	}
}

// readHolder says who holds the lease at path, as far as its file says.
func readHolder(path string) string {
	b, err := os.ReadFile(path)
	if h := strings.TrimSpace(string(b)); err == nil && h != "" {
		return h
	}
	return "another server (a Shared hold on the devices)"
}

// Holder describes a start for the lease files: this process, and the
// backend and profile it starts.
func Holder(backend, profileName string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("pid %d on %s (%s backend, profile %s) since %s", os.Getpid(), host, backend, profileName, time.Now().Format(time.RFC3339))
}

// errLockUnsupported is returned where file locks are not available.
var errLockUnsupported = errors.New("advisory file locks are not supported on this platform")

// GPUs is a GPU selection, as VLLMPERF_GPUS gives it.
type GPUs struct {
	All bool     // every GPU (docker --gpus all)
	IDs []string // these device ids or UUIDs; empty with All false: none
}

// String names the selection as VLLMPERF_GPUS spells it.
func (g GPUs) String() string {
	switch {
	case g.All:
		return "all"
	case len(g.IDs) == 0:
		return "none"
	}
	return strings.Join(g.IDs, ",")
}
