package suite

import "github.com/vllmperf/vllmperf/internal/target/profile"

// GPUs is how many GPUs the named profile's server uses (tensor ×
// pipeline × data parallel size of its flags): the width of the GPU set it
// needs when profiles are spread over a runner's GPUs (package spread).
func GPUs(name string) (int, error) {
	p, err := profile.Resolve(name)
	if err != nil {
		return 0, err
	}
	return gpus(p), nil
}
