package server

import (
	"testing"

	"github.com/moby/moby/api/types/container"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server/lease"
)

// TestSimImageLeasesFakeGPUSets: the simulator image with device ids
// holds those ids' leases, asks Docker for no device (the ids may name
// fake GPU sets) and labels its container with the set; a vLLM image asks
// for the devices.
func TestSimImageLeasesFakeGPUSets(t *testing.T) {
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, image, gpus string
		devices           bool
	}{
		{"sim image, fake set", SimImage, "set-a", false},
		{"sim image, two ids", SimImage, "0,1", false},
		{"vllm image", DefaultImage, "0,1", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := defaultSettings()
			for _, o := range []Option{WithBackend(KindContainer), WithImage(tc.image), withGPUs(tc.gpus), withHFCache(t.TempDir())} {
				o(&s)
			}
			r, err := buildRequest(s, p)
			if err != nil {
				t.Fatal(err)
			}
			var hc container.HostConfig
			r.modifyHostConfig(&hc)
			if got := len(hc.DeviceRequests) > 0; got != tc.devices {
				t.Errorf("device requests %+v: want devices %v", hc.DeviceRequests, tc.devices)
			}
			if got := r.labels[labelGPUs]; got != tc.gpus {
				t.Errorf("label %s = %q, want %q", labelGPUs, got, tc.gpus)
			}
			locks := lease.ContainerLocks(r.gpus)
			if len(locks) < 2 || locks[0].Mode() != lease.Shared {
				t.Errorf("locks %+v: want the devices file shared and each id exclusive", locks)
			}
		})
	}
}
