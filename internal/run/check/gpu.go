package check

import (
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/target/telemetry"
)

// The GPU checks' names.
const (
	GPUThrottle  = "gpu/throttle"
	GPUExclusive = "gpu/exclusive"
	// GPUTelemetry stands for both when there is no telemetry at all.
	GPUTelemetry = "gpu/telemetry"
)

// GPU judges the telemetry of a run (package telemetry): INVALID when the
// GPU slowed for heat, its hardware or a power limit below the board's
// default (gpu/throttle) or another process used it (gpu/exclusive), with
// the evidence; the SW power cap at the default limit is a PASS that says
// so; PASS when the telemetry shows
// neither; one NOT_AVAILABLE (gpu/telemetry) when there is none. required says the server
// runs on this machine's GPUs, where missing telemetry fails in strict
// mode; for a simulator or a machine without GPUs it is reported as
// NOT_AVAILABLE, never failed and never a pass (Advisory).
func GPU(s telemetry.Summary, required bool) []Result {
	if !s.Available {
		why := s.Why
		if !required {
			why = "the server runs on no GPU this machine can watch (simulator, VLLMPERF_GPUS=none, or a remote deployment without " + telemetry.EnvDCGMURL + "): " + why
		}
		return []Result{{Name: GPUTelemetry, Status: NotAvailable, Metric: "nvidia-smi", Detail: why, Advisory: !required}}
	}
	src := strings.Join(s.Sources, ", ")
	out := []Result{pass(GPUThrottle, "no thermal or hardware slowdown and no lowered power limit in %d samples (%s)", s.Samples, src)}
	if len(s.Unread) > 0 {
		out[0].Detail += "; not read: " + strings.Join(s.Unread, "; ")
	}
	if s.WithReasons < s.Samples {
		out[0].Detail += fmt.Sprintf("; the clock-event reasons were read in %d of them", s.WithReasons)
	}
	if len(s.AtPowerLimit) > 0 {
		out[0].Detail += "; the board's default power limit held the clocks down, a full load's own ceiling on any such board at its default settings: " +
			strings.Join(s.AtPowerLimit, "; ")
	}
	switch {
	case len(s.Throttled) > 0:
		out[0] = Result{Name: GPUThrottle, Status: Invalid,
			Detail: "the GPU slowed for heat, its hardware or a lowered power limit during the run, so its figures measure the runner, not vLLM: " + strings.Join(s.Throttled, "; ")}
	case s.WithReasons == 0:
		out[0] = Result{Name: GPUThrottle, Status: NotAvailable, Metric: telemetry.ReasonsField, Advisory: !required,
			Detail: fmt.Sprintf("none of the %d samples (%s) carried the clock-event (throttle) reasons, so a slowdown would go unseen: %s", s.Samples, src, telemetry.ReasonsAdvice)}
	}
	switch {
	case !s.ProcessesKnown:
		out = append(out, Result{Name: GPUExclusive, Status: NotAvailable, Metric: "nvidia-smi --query-compute-apps",
			Detail: fmt.Sprintf("%s lists no processes: another process on the GPU would go unseen", src), Advisory: !required})
	case len(s.Foreign) == 0 && s.Own == 0 && s.ServerOnGPU:
		out = append(out, Result{Name: GPUExclusive, Status: NotAvailable, Metric: "nvidia-smi --query-compute-apps", Advisory: !required,
			Detail: fmt.Sprintf("%s lists no process on the GPU, not even the server's: processes are not visible from here (a container without the host's PID namespace: run it with --pid=host), so another one would go unseen too", src)})
	case len(s.Foreign) == 0 && s.Own == 0:
		// The simulator has no process on the GPU: nothing shows that
		// processes are visible from here, and its figures do not depend
		// on the GPU, so this is reported without failing.
		out = append(out, Result{Name: GPUExclusive, Status: NotAvailable, Metric: "nvidia-smi --query-compute-apps", Advisory: true,
			Detail: fmt.Sprintf("%s lists no compute process, and the server runs none on these GPUs (the simulator) to show that processes are visible from here: in a container without the host's PID namespace another process would go unseen", src)})
	case len(s.Foreign) > 0:
		out = append(out, Result{Name: GPUExclusive, Status: Invalid,
			Detail: "another process used the GPU during the run: " + strings.Join(s.Foreign, "; ")})
	default:
		out = append(out, pass(GPUExclusive, "no process but the server's on the GPU (%s)", src))
	}
	return out
}
