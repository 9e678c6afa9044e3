package suite

import (
	"context"

	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/telemetry"
)

// gpuWatch is a session's GPU telemetry: its sources, whether they are
// required, and the server's own processes.
type gpuWatch struct {
	sources  []telemetry.Source
	required bool
	local    bool // the server runs on these GPUs (onLocalGPU)
	own      map[int]bool
}

// onLocalGPU reports whether the server runs on this machine's GPUs: a
// container that is not the simulator's image.
func onLocalGPU(d server.Description) bool {
	return d.Backend == server.KindContainer && !d.Simulator
}

// gpuProcesses are the compute processes on the GPUs before a server
// starts (none read when no run of this suite can be watched).
func (s *Suite) gpuProcesses(ctx context.Context) map[int]bool {
	if s.cfg.Backend != server.KindContainer && s.cfg.Telemetry.Mode != telemetry.ModeOn {
		return nil
	}
	srcs, _ := s.cfg.Telemetry.Sources(true)
	return telemetry.PIDs(ctx, srcs)
}

// watch chooses the sources for a started server; its own processes are
// those that appeared since before.
func (s *Suite) watch(ctx context.Context, d server.Description, before map[int]bool) gpuWatch {
	srcs, required := s.cfg.Telemetry.Sources(onLocalGPU(d))
	w := gpuWatch{sources: srcs, required: required, local: onLocalGPU(d)}
	if len(srcs) > 0 {
		w.own = telemetry.Own(before, telemetry.PIDs(ctx, srcs))
	}
	return w
}

// start starts recording a run (nil without sources).
func (w gpuWatch) start(ctx context.Context) *telemetry.Recorder {
	if len(w.sources) == 0 {
		return nil
	}
	return telemetry.Start(ctx, telemetry.DefaultInterval, w.sources...)
}

// stop ends the recording and summarizes it (not available without one).
func (w gpuWatch) stop(rec *telemetry.Recorder) telemetry.Summary {
	var recs []telemetry.Recording
	if rec != nil {
		recs = rec.Stop()
	}
	sum := telemetry.Summarize(recs, w.own)
	sum.ServerOnGPU = w.local
	return sum
}
