// Package owner names the process that starts a container, on the
// container's labels (Label, JobLabel), so that a later process can tell a
// leftover of a killed process from a container a live process still
// uses (server's reap.go).
package owner

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// The owner of a container: the process that started it, put on the
// container as Label so that a later process can tell a leftover of a
// killed process (removed at the next start, reap.go) from a container a
// live process still uses (left alone, whatever else runs on this Docker
// engine). A pid alone is not enough: pids are reused, and one engine may
// serve processes in other pid namespaces (a CI job in a container, even
// one with the host's name under --network host). So the owner is the
// host, its pid namespace (the inode of /proc/self/ns/pid), the pid and
// the process's start time (in the kernel's clock ticks since boot,
// /proc/PID/stat); the last two are empty where there is no /proc.
const Label = "org.vllmperf.owner"

// The job: what a whole gate's containers share, across the processes it
// runs (vllmperf perf-gate passes it to go test's test binary), so that
// its containers are found by one label. EnvJob sets it; by default it is
// the starting process's owner value.
const JobLabel = "org.vllmperf.job"

// EnvJob names the job on the containers this process starts (labelled
// org.vllmperf.job; package envvar declares it).
var EnvJob = envvar.Job.Name

// Job is the job's name: EnvJob, or this process's owner value.
func Job() string {
	if v := strings.TrimSpace(os.Getenv(EnvJob)); v != "" {
		return v
	}
	return Self().String()
}

// ID identifies one process on one host.
type ID struct {
	Host  string
	NS    string // the pid namespace; "" when unknown
	PID   int
	Start string // the process's start time as the kernel counts it; "" when unknown
}

// String is the label's value: HOST/PIDNS/PID/START.
func (o ID) String() string {
	return o.Host + "/" + o.NS + "/" + strconv.Itoa(o.PID) + "/" + o.Start
}

// Describe names the owner for a line about a leftover.
func (o ID) Describe() string {
	return fmt.Sprintf("pid %d on %s", o.PID, o.Host)
}

// Parse reads a Label value.
func Parse(v string) (ID, error) {
	parts := strings.Split(v, "/")
	if len(parts) != 4 || parts[0] == "" {
		return ID{}, fmt.Errorf("owner label %q: want HOST/PIDNS/PID/START", v)
	}
	pid, err := strconv.Atoi(parts[2])
	if err != nil || pid <= 0 {
		return ID{}, fmt.Errorf("owner label %q: the pid %q is not a positive number", v, parts[2])
	}
	return ID{Host: parts[0], NS: parts[1], PID: pid, Start: parts[3]}, nil
}

// Liveness is what this process can tell of an owner.
type Liveness int

// The liveness of an owner.
const (
	Unknown Liveness = iota // another host, or no way to look: left alone
	Alive
	Gone
)

// String is the word for l in a line about a leftover.
func (l Liveness) String() string {
	switch l {
	case Alive:
		return "alive"
	case Gone:
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
	selfID   ID
)

// Self is this process as an owner.
func Self() ID {
	selfOnce.Do(func() {
		pid := os.Getpid()
		start, _ := ProcessStart(pid)
		selfID = ID{Host: hostname(), NS: pidNamespace(), PID: pid, Start: start}
	})
	return selfID
}

// Check says whether o still runs, as far as this process can tell: an
// owner on another host or in another pid namespace (or one whose
// namespace is not known) is unknown; in this one, a pid that no longer
// exists, or exists with another start time (reused), is gone.
func (o ID) Check() Liveness {
	me := Self()
	if o.Host != me.Host || o.Host == "" || o.NS != me.NS || o.NS == "" {
		return Unknown
	}
	start, exists := ProcessStart(o.PID)
	switch {
	case !exists:
		return Gone
	case o.Start != "" && start != "" && start != o.Start:
		return Gone // the pid was reused by another process
	}
	return Alive
}
