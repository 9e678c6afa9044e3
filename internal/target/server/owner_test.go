package server

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/moby/moby/api/types/container"
)

// TestParseOwner: the owner label's value round-trips, and a malformed
// one says what is wrong.
func TestParseOwner(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    owner
		wantErr bool
	}{
		// host, pid namespace, pid and start time
		{"runner-1/4026531836/4242/98765", owner{host: "runner-1", ns: "4026531836", pid: 4242, start: "98765"}, false},
		// no /proc: no namespace, no start time
		{"mac//17/", owner{host: "mac", pid: 17}, false},
		// a pid that is not a number
		{"h/1/x/1", owner{}, true},
		// a pid of 0 would be the process group
		{"h/1/0/1", owner{}, true},
		// no host
		{"/1/1/2", owner{}, true},
		// the three-field form of no release
		{"h/1/2", owner{}, true},
	} {
		got, err := parseOwner(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("parseOwner(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err == nil && got.String() != tc.in {
			t.Errorf("String() = %q, want %q", got.String(), tc.in)
		}
	}
}

// TestOwnerCheck: this process is alive; a process that exited is gone;
// a pid whose start time differs was reused (gone); another host's
// owner cannot be looked up (unknown, left alone).
func TestOwnerCheck(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("owners are looked up in /proc (Linux); elsewhere every owner counts as alive")
	}
	me := self()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	exited := owner{host: me.host, ns: me.ns, pid: cmd.ProcessState.Pid()}
	for _, tc := range []struct {
		name string
		o    owner
		want liveness
	}{
		{"this process", me, ownerAlive},
		{"an exited process", exited, ownerGone},
		{"a reused pid", owner{host: me.host, ns: me.ns, pid: me.pid, start: me.start + "0"}, ownerGone},
		{"another host", owner{host: me.host + "-other", ns: me.ns, pid: me.pid, start: me.start}, ownerUnknown},
		{"another pid namespace", owner{host: me.host, ns: me.ns + "1", pid: cmd.ProcessState.Pid()}, ownerUnknown},
	} {
		if got := tc.o.check(); got != tc.want {
			t.Errorf("%s (%s): %v, want %v", tc.name, tc.o, got, tc.want)
		}
	}
	if me.start == "" || me.ns == "" {
		t.Errorf("this process's start time %q or pid namespace %q is empty: /proc/%s not read", me.start, me.ns, strconv.Itoa(me.pid))
	}
}

// TestGPUOverlap: which GPUs a leftover's device requests hold, and
// whether they meet a start's.
func TestGPUOverlap(t *testing.T) {
	t.Parallel()
	gpu := [][]string{{"gpu"}}
	for _, tc := range []struct {
		name string
		reqs []container.DeviceRequest
		want gpuSelection
		with gpuSelection
		hits bool
	}{
		// --gpus all against one named GPU
		{"all vs one", []container.DeviceRequest{{Count: -1, Capabilities: gpu}}, gpuSelection{all: true}, gpuSelection{ids: []string{"0"}}, true},
		// the same id
		{"same id", []container.DeviceRequest{{DeviceIDs: []string{"1", "2"}, Capabilities: gpu}}, gpuSelection{ids: []string{"1", "2"}}, gpuSelection{ids: []string{"2"}}, true},
		// other ids
		{"other ids", []container.DeviceRequest{{DeviceIDs: []string{"1"}, Capabilities: gpu}}, gpuSelection{ids: []string{"1"}}, gpuSelection{ids: []string{"0"}}, false},
		// no device request (the simulator image): holds no GPU
		{"none", nil, gpuSelection{}, gpuSelection{all: true}, false},
		// a request that is not for GPUs
		{"not a gpu", []container.DeviceRequest{{Count: -1, Capabilities: [][]string{{"tpu"}}}}, gpuSelection{}, gpuSelection{all: true}, false},
		// a start without GPUs shares none
		{"start without", []container.DeviceRequest{{Count: -1, Capabilities: gpu}}, gpuSelection{all: true}, gpuSelection{}, false},
	} {
		got := gpusOf(&container.HostConfig{Resources: container.Resources{DeviceRequests: tc.reqs}})
		if got.String() != tc.want.String() {
			t.Errorf("%s: gpusOf = %s, want %s", tc.name, got, tc.want)
		}
		if hit := got.overlaps(tc.with); hit != tc.hits {
			t.Errorf("%s: %s overlaps %s = %v, want %v", tc.name, got, tc.with, hit, tc.hits)
		}
	}
}
