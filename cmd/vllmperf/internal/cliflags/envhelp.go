package cliflags

import (
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// EnvHelp is a command's long help: intro, then the environment settings
// it reads, one a line with its default (when its doc does not say it)
// and its old name (when it had one), and more: where the rest are told.
func EnvHelp(intro string, settings []envvar.Setting, more string) string {
	var b strings.Builder
	b.WriteString(intro + "\n\nEnvironment:\n")
	for _, s := range settings {
		fmt.Fprintf(&b, "  %s: %s", s.Name, s.Doc)
		if s.Default != "" && !strings.Contains(s.Doc, "default") {
			fmt.Fprintf(&b, " (default %s)", s.Default)
		}
		if f := s.Formerly(); f != "" {
			fmt.Fprintf(&b, " (%s)", f)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n" + more)
	return b.String()
}

// The long help of `vllmperf perf-gate` and `vllmperf plan` (package
// perfgate), before their environment.
const (
	PerfGateLong = `Perf-gate runs what .github/workflows/perf-gate.yml runs, configured by the
environment as make perf-gate: the plan (server starts, points, runs, and the
time from the last run on the same key), the suite (go test -bench Perf
-count VLLMPERF_COUNT) into a results folder, then the gate against the baseline
stored for the run's key (runner, GPU, backend, image, model, size, profiles,
scenarios). With no baseline for the key this run is recorded as it and
passes, with a notice. Exit status: 0 pass, 1 fail, 2 INVALID or not
comparable, 3 inconclusive. See docs/gpu-runners.md and docs/gate.md.`
	PlanLong = `Plan states what make perf-gate would run, without running it: the server
starts, the points and runs, and the time, from the last run on the same key,
or predicted on the simulator preset of the GPU (VLLMPERF_GPU_NAME);
VLLMPERF_BUDGET picks the count that fits.`
	PerfGateMore = `The suite's and the servers' settings apply too (docs/settings.md lists
every setting). The backend is VLLMPERF_BACKEND's, sim when unset; make
perf-gate and make plan set it to container unless it is set, as
perf-gate.yml runs.
`
)
