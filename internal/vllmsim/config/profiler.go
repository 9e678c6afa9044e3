package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ProfilerDirEnv is vLLM's trace-folder environment variable: set, vllm
// serve (before --profiler-config replaced it) serves /start_profile and
// /stop_profile and writes torch profiler traces there. New reads it as
// vLLM does; --profiler-config wins when both are given.
const ProfilerDirEnv = "VLLM_TORCH_PROFILER_DIR"

// ProfilerTorch is the one profiler kind the simulator writes: vLLM's
// --profiler-config '{"profiler":"torch",...}'.
const ProfilerTorch = "torch"

// ProfilerOptions are vLLM's profiler settings (--profiler-config, or
// VLLM_TORCH_PROFILER_DIR): when Profiler is "torch", POST /start_profile
// and /stop_profile are served and each session writes a Chrome trace of
// the engine's steps into Dir; otherwise both answer 404, as vLLM does.
type ProfilerOptions struct {
	Profiler string // "" (off) or "torch"
	Dir      string // torch_profiler_dir
	// NoGzip is torch_profiler_use_gzip=false: plain JSON traces (vLLM's
	// default, and the simulator's, is gzip).
	NoGzip bool
}

// Enabled reports whether the profiler endpoints are served.
func (p ProfilerOptions) Enabled() bool { return p.Profiler != "" }

// profilerConfigKeys are ProfilerConfig's fields in vLLM: the simulator
// acts on profiler, torch_profiler_dir and torch_profiler_use_gzip and
// accepts the others with no effect.
var profilerConfigKeys = []string{
	"profiler", "torch_profiler_dir", "torch_profiler_with_stack", "torch_profiler_with_flops",
	"torch_profiler_use_gzip", "torch_profiler_dump_cuda_time_total", "torch_profiler_record_shapes",
	"torch_profiler_with_memory", "capture_torch_profiler", "detailed_trace_annotation", "ignore_frontend",
	"delay_iterations", "max_iterations", "warmup_iterations", "active_iterations", "wait_iterations",
}

// setProfilerField sets one ProfilerConfig field from its text, as
// --profiler-config.KEY=VALUE gives it.
func (p *ProfilerOptions) setField(key, val string) error {
	key = strings.ReplaceAll(key, "-", "_")
	switch key {
	case "profiler":
		if val == "None" || val == "null" {
			val = ""
		}
		p.Profiler = val
	case "torch_profiler_dir":
		p.Dir = val
	case "torch_profiler_use_gzip":
		b, err := strconv.ParseBool(strings.ToLower(val))
		if err != nil {
			return fmt.Errorf("torch_profiler_use_gzip: invalid boolean '%s' (want true or false)", val)
		}
		p.NoGzip = !b
	default:
		if !slices.Contains(profilerConfigKeys, key) {
			return fmt.Errorf("unknown ProfilerConfig field '%s' (known: %s)", key, strings.Join(profilerConfigKeys, ", "))
		}
	}
	return nil
}

// parseProfilerConfig reads --profiler-config's JSON object.
func (p *ProfilerOptions) parseJSON(v string) error {
	var m map[string]any
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return fmt.Errorf(`invalid JSON '%s': %v (want e.g. '{"profiler":"torch","torch_profiler_dir":"/traces"}')`, v, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		val := ""
		switch x := m[k].(type) {
		case nil:
			val = "None"
		case string:
			val = x
		default:
			val = fmt.Sprint(x)
		}
		if err := p.setField(k, val); err != nil {
			return err
		}
	}
	return nil
}

// validate refuses what vLLM's ProfilerConfig refuses, and a profiler the
// simulator cannot be.
func (p ProfilerOptions) validate() error {
	switch {
	case p.Profiler != "" && p.Profiler != ProfilerTorch:
		return ArgErrorf("argument --profiler-config: profiler '%s': vllm-sim writes torch profiler traces only (want \"torch\")", p.Profiler)
	case p.Dir != "" && p.Profiler == "":
		return ArgErrorf("argument --profiler-config: torch_profiler_dir is only applicable when profiler is set to 'torch' (add profiler=torch)")
	case p.Profiler == ProfilerTorch && p.Dir == "":
		return ArgErrorf("argument --profiler-config: torch_profiler_dir must be set when profiler is 'torch'")
	}
	return nil
}

// profilerFlags are --profiler-config and its dotted fields.
var profilerFlags = []flagSpec{
	{name: "profiler-config", meta: "JSON", help: `vLLM's profiler: '{"profiler":"torch","torch_profiler_dir":"/traces"}' serves POST /start_profile and /stop_profile, each session a Chrome trace of the engine steps in the folder (` + ProfilerDirEnv + "=DIR does the same)",
		set: func(o *Options, v string) error { return o.Profiler.parseJSON(v) }},
	{name: "profiler-config.profiler", meta: "KIND", help: "--profiler-config's profiler field (torch)",
		set: func(o *Options, v string) error { return o.Profiler.setField("profiler", v) }},
	{name: "profiler-config.torch-profiler-dir", meta: "DIR", help: "--profiler-config's torch_profiler_dir field",
		set: func(o *Options, v string) error { return o.Profiler.setField("torch_profiler_dir", v) }},
	{name: "profiler-config.torch-profiler-use-gzip", meta: "BOOL", help: "--profiler-config's torch_profiler_use_gzip field (default true)",
		set: func(o *Options, v string) error { return o.Profiler.setField("torch_profiler_use_gzip", v) }},
}

// ProfilerFromEnv applies VLLM_TORCH_PROFILER_DIR (getenv's) when no
// --profiler-config turned the profiler on.
func (o *Options) ProfilerFromEnv(getenv func(string) string) {
	if dir := getenv(ProfilerDirEnv); dir != "" && !o.Profiler.Enabled() {
		o.Profiler = ProfilerOptions{Profiler: ProfilerTorch, Dir: dir, NoGzip: o.Profiler.NoGzip}
	}
}
