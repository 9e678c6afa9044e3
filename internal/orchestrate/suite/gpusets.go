package suite

import (
	"fmt"
	"os"
	"strings"

	"github.com/vllmperf/vllmperf/internal/orchestrate/gpuset"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// warnGPUSets (from Main, a test binary's start): VLLMPERF_GPU_SETS is
// read by `vllmperf perf-gate` (make perf-gate), which starts a go test
// process per profile on its own set and removes the variable from their
// environment. A test binary that still sees it was started some other
// way: its profiles run one after another on VLLMPERF_GPUS, and it says so
// rather than ignore the setting.
func warnGPUSets() {
	if v := strings.TrimSpace(os.Getenv(gpuset.EnvGPUSets)); v != "" {
		fmt.Fprintf(os.Stderr, "vllmperf suite: %s=%s is read by vllmperf perf-gate (make perf-gate), which runs the profiles on the sets at once; this go test process runs its profiles one after another on %s=%q\n",
			gpuset.EnvGPUSets, v, envvar.GPUs.Name, os.Getenv(envvar.GPUs.Name))
	}
}
