package server

import (
	"encoding/json"

	"github.com/moby/moby/api/types/mount"
	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// containerTraceDir is where a container's profiler writes, the host's
// trace folder mounted there.
const containerTraceDir = "/vllm-traces"

// envProfilerDir is vLLM's trace-folder environment variable (deprecated
// by --profiler-config in newer releases, which still read it).
const envProfilerDir = "VLLM_TORCH_PROFILER_DIR"

// WithTorchProfiler turns on the profiler of the servers Run starts, its
// traces written to dir on this machine (an absolute path): the
// simulator in process gets --profiler-config, a container gets dir
// mounted at /vllm-traces and VLLM_TORCH_PROFILER_DIR naming it. The
// external backend ignores it: its profiler is its own.
func WithTorchProfiler(dir string) Option { return func(s *settings) { s.traceDir = dir } }

// simProfilerArgs are the in-process simulator's profiler flags for dir.
func simProfilerArgs(dir string) []string {
	if dir == "" {
		return nil
	}
	cfg, _ := json.Marshal(map[string]any{"profiler": "torch", "torch_profiler_dir": dir})
	return cliarg.ProfilerConfig.With(string(cfg))
}

// applyTraces mounts the trace folder and names it to the server.
func (r *containerRequest) applyTraces(dir string) {
	if dir == "" {
		return
	}
	r.traceDir = dir
	r.env[envProfilerDir] = containerTraceDir
}

// traceMount is the trace folder's bind mount, if any.
func (r containerRequest) traceMounts() []mount.Mount {
	if r.traceDir == "" {
		return nil
	}
	return []mount.Mount{{Type: mount.TypeBind, Source: r.traceDir, Target: containerTraceDir}}
}
