package server

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// The owner of a container: the process that started it, put on the
// container as labelOwner so that a later process can tell a leftover of a
// killed process (removed at the next start, reap.go) from a container a
// live process still uses (left alone, whatever else runs on this Docker
// engine). A pid alone is not enough: pids are reused, and one engine may
// serve processes in other pid namespaces (a CI job in a container, even
// one with the host's name under --network host). So the owner is the
// host, its pid namespace (the inode of /proc/self/ns/pid), the pid and
// the process's start time (in the kernel's clock ticks since boot,
// /proc/PID/stat); the last two are empty where there is no /proc.
const labelOwner = "org.vllmperf.owner"

// The job: what a whole gate's containers share, across the processes it
// runs (vllmperf perf-gate passes it to go test's test binary), so that
// its containers are found by one label. EnvJob sets it; by default it is
// the starting process's owner value.
const labelJob = "org.vllmperf.job"

// EnvJob names the job on the containers this process starts (labelled
// org.vllmperf.job; package envvar declares it).
var EnvJob = envvar.Job.Name

// Job is the job's name: EnvJob, or this process's owner value.
func Job() string {
	if v := strings.TrimSpace(os.Getenv(EnvJob)); v != "" {
		return v
	}
	return self().String()
}

// owner identifies one process on one host.
type owner struct {
	host  string
	ns    string // the pid namespace; "" when unknown
	pid   int
	start string // the process's start time as the kernel counts it; "" when unknown
}

// String is the label's value: HOST/PIDNS/PID/START.
func (o owner) String() string {
	return o.host + "/" + o.ns + "/" + strconv.Itoa(o.pid) + "/" + o.start
}

// describe names the owner for a line about a leftover.
func (o owner) describe() string {
	return fmt.Sprintf("pid %d on %s", o.pid, o.host)
}

// parseOwner reads a labelOwner value.
func parseOwner(v string) (owner, error) {
	parts := strings.Split(v, "/")
	if len(parts) != 4 || parts[0] == "" {
		return owner{}, fmt.Errorf("owner label %q: want HOST/PIDNS/PID/START", v)
	}
	pid, err := strconv.Atoi(parts[2])
	if err != nil || pid <= 0 {
		return owner{}, fmt.Errorf("owner label %q: the pid %q is not a positive number", v, parts[2])
	}
	return owner{host: parts[0], ns: parts[1], pid: pid, start: parts[3]}, nil
}

// liveness is what this process can tell of an owner.
type liveness int

const (
	ownerUnknown liveness = iota // another host, or no way to look: left alone
	ownerAlive
	ownerGone
)

func (l liveness) String() string {
	switch l {
	case ownerAlive:
		return "alive"
	case ownerGone:
		return "gone"
	}
	return "unknown"
}

// hostname is this machine's name, "" when the system does not say.
func hostname() string {
	h, _ := os.Hostname()
	return h
}

var (
	selfOnce sync.Once
	selfID   owner
)

// self is this process as an owner.
func self() owner {
	selfOnce.Do(func() {
		pid := os.Getpid()
		start, _ := processStart(pid)
		selfID = owner{host: hostname(), ns: pidNamespace(), pid: pid, start: start}
	})
	return selfID
}

// check says whether o still runs, as far as this process can tell: an
// owner on another host or in another pid namespace (or one whose
// namespace is not known) is unknown; in this one, a pid that no longer
// exists, or exists with another start time (reused), is gone.
func (o owner) check() liveness {
	me := self()
	if o.host != me.host || o.host == "" || o.ns != me.ns || o.ns == "" {
		return ownerUnknown
	}
	start, exists := processStart(o.pid)
	switch {
	case !exists:
		return ownerGone
	case o.start != "" && start != "" && start != o.start:
		return ownerGone // the pid was reused by another process
	}
	return ownerAlive
}
