package server

import (
	"testing"

	"github.com/moby/moby/api/types/container"
)

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
		{"all vs one", []container.DeviceRequest{{Count: -1, Capabilities: gpu}}, gpuSelection{All: true}, gpuSelection{IDs: []string{"0"}}, true},
		// the same id
		{"same id", []container.DeviceRequest{{DeviceIDs: []string{"1", "2"}, Capabilities: gpu}}, gpuSelection{IDs: []string{"1", "2"}}, gpuSelection{IDs: []string{"2"}}, true},
		// other ids
		{"other ids", []container.DeviceRequest{{DeviceIDs: []string{"1"}, Capabilities: gpu}}, gpuSelection{IDs: []string{"1"}}, gpuSelection{IDs: []string{"0"}}, false},
		// no device request (the simulator image): holds no GPU
		{"none", nil, gpuSelection{}, gpuSelection{All: true}, false},
		// a request that is not for GPUs
		{"not a gpu", []container.DeviceRequest{{Count: -1, Capabilities: [][]string{{"tpu"}}}}, gpuSelection{}, gpuSelection{All: true}, false},
		// a start without GPUs shares none
		{"start without", []container.DeviceRequest{{Count: -1, Capabilities: gpu}}, gpuSelection{All: true}, gpuSelection{}, false},
	} {
		got := gpusOf(&container.HostConfig{Resources: container.Resources{DeviceRequests: tc.reqs}})
		if got.String() != tc.want.String() {
			t.Errorf("%s: gpusOf = %s, want %s", tc.name, got, tc.want)
		}
		if hit := overlaps(got, tc.with); hit != tc.hits {
			t.Errorf("%s: %s overlaps %s = %v, want %v", tc.name, got, tc.with, hit, tc.hits)
		}
	}
}
