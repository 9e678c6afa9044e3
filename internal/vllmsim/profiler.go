package vllmsim

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// ProfilerDirEnv is vLLM's trace-folder environment variable: set, vllm
// serve (before --profiler-config replaced it) serves /start_profile and
// /stop_profile and writes torch profiler traces there. New reads it as
// vLLM does; --profiler-config wins when both are given.
const ProfilerDirEnv = "VLLM_TORCH_PROFILER_DIR"

// ProfilerTorch is the one profiler kind the simulator writes: vLLM's
// --profiler-config '{"profiler":"torch",...}'.
const ProfilerTorch = "torch"

// TraceSuffix ends every trace file the simulator writes, before ".gz"
// (torch's tensorboard_trace_handler naming: WORKER.TIME.pt.trace.json).
const TraceSuffix = ".pt.trace.json"

// maxProfiledSteps bounds one profiling session's memory: steps past it
// are counted, not kept.
const maxProfiledSteps = 1 << 20

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
		return argErrorf("argument --profiler-config: profiler '%s': vllm-sim writes torch profiler traces only (want \"torch\")", p.Profiler)
	case p.Dir != "" && p.Profiler == "":
		return argErrorf("argument --profiler-config: torch_profiler_dir is only applicable when profiler is set to 'torch' (add profiler=torch)")
	case p.Profiler == ProfilerTorch && p.Dir == "":
		return argErrorf("argument --profiler-config: torch_profiler_dir must be set when profiler is 'torch'")
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

// profilerFromEnv applies VLLM_TORCH_PROFILER_DIR (getenv's) when no
// --profiler-config turned the profiler on.
func (o *Options) profilerFromEnv(getenv func(string) string) {
	if dir := getenv(ProfilerDirEnv); dir != "" && !o.Profiler.Enabled() {
		o.Profiler = ProfilerOptions{Profiler: ProfilerTorch, Dir: dir, NoGzip: o.Profiler.NoGzip}
	}
}

// profiler is the server's torch profiler: one session at a time, its
// steps kept until /stop_profile writes them. Locks: mu (the session)
// may be held while the engine's lock is taken (ObserveSteps); the
// engine calls record under its lock, which takes stepsMu only.
type profiler struct {
	opts ProfilerOptions
	log  *logger

	mu      sync.Mutex
	active  bool
	started time.Time
	stop    func()

	stepsMu sync.Mutex
	steps   []engine.Step
	dropped int
}

// profileRoutes serves /start_profile and /stop_profile when the profiler
// is on; without it they are not routes (404), as in vLLM.
func (s *Server) profileRoutes(mux *http.ServeMux) {
	if !s.opts.Profiler.Enabled() {
		return
	}
	s.prof = &profiler{opts: s.opts.Profiler, log: s.log}
	s.log.warnf("Torch Profiler is enabled in the API server (traces in %s). This should ONLY be used for local development!", s.opts.Profiler.Dir)
	mux.HandleFunc("/start_profile", postOnly(s.handleStartProfile))
	mux.HandleFunc("/stop_profile", postOnly(s.handleStopProfile))
}

// postOnly answers another method with 405, as FastAPI does for a POST
// route (the catch-all would answer 404, as for a path not served).
func postOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
			return
		}
		h(w, r)
	}
}

func (s *Server) handleStartProfile(w http.ResponseWriter, r *http.Request) {
	s.log.infof("Starting profiler...")
	p := s.prof
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.active {
		p.active, p.started = true, time.Now()
		p.stepsMu.Lock()
		p.steps, p.dropped = nil, 0
		p.stepsMu.Unlock()
		p.stop = func() {}
		if obs, ok := s.current().eng.(engine.StepObserver); ok {
			p.stop = obs.ObserveSteps(p.record)
		} else {
			s.log.warnf("Profiler: the fixed-timing engine has no steps; the trace holds none")
		}
	}
	s.log.infof("Profiler started.")
	w.WriteHeader(http.StatusOK)
}

func (s *Server) handleStopProfile(w http.ResponseWriter, r *http.Request) {
	s.log.infof("Stopping profiler...")
	p := s.prof
	p.mu.Lock()
	if !p.active {
		p.mu.Unlock()
		s.log.warnf("Profiler was not started: no trace written")
		w.WriteHeader(http.StatusOK)
		return
	}
	p.stop()
	p.stepsMu.Lock()
	steps, dropped, started := p.steps, p.dropped, p.started
	p.steps = nil
	p.stepsMu.Unlock()
	p.active, p.stop = false, nil
	p.mu.Unlock()
	path, err := writeTrace(p.opts, started, time.Now(), steps, dropped, s.info)
	if err != nil {
		s.log.errorf("Profiler: %v", err)
		writeError(w, http.StatusInternalServerError, "InternalServerError", "", "write the profiler trace: "+err.Error())
		return
	}
	s.log.infof("Profiler stopped: %d engine steps in %s", len(steps), path)
	w.WriteHeader(http.StatusOK)
}

// record keeps one step (called by the engine under its lock).
func (p *profiler) record(st engine.Step) {
	p.stepsMu.Lock()
	defer p.stepsMu.Unlock()
	if len(p.steps) >= maxProfiledSteps {
		p.dropped++
		return
	}
	p.steps = append(p.steps, st)
}

// traceEvent is one Chrome trace event (the Trace Event Format, as
// torch.profiler writes it: ts and dur in microseconds).
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// trace is a Chrome trace file.
type trace struct {
	SchemaVersion   int            `json:"schemaVersion"`
	TraceEvents     []traceEvent   `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit"`
	OtherData       map[string]any `json:"otherData"`
}

// micros is t in microseconds since the epoch.
func micros(t time.Time) float64 { return float64(t.UnixNano()) / 1e3 }

// stepName is vLLM's step annotation: requests and tokens of the
// context (prefill) and generation (decode) parts of the batch.
func stepName(st engine.Step) string {
	return fmt.Sprintf("execute_context_%d(%d)_generation_%d(%d)", st.PrefillRequests, st.PrefillTokens, st.DecodeRequests, st.DecodeTokens)
}

// buildTrace turns a session's steps into a Chrome trace: one complete
// event per step (its batch in args) and counters of the batch's tokens
// and of the queues.
func buildTrace(start, end time.Time, steps []engine.Step, dropped int, info engine.Info) trace {
	const pid, tid = 1, 1
	ev := []traceEvent{
		{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": "vllm-sim EngineCore"}},
		{Name: "thread_name", Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"name": "engine steps"}},
	}
	for _, st := range steps {
		dur := st.End.Sub(st.Start)
		ev = append(ev, traceEvent{
			Name: stepName(st), Cat: "user_annotation", Ph: "X", Pid: pid, Tid: tid,
			Ts: micros(st.Start), Dur: float64(dur.Nanoseconds()) / 1e3,
			Args: map[string]any{
				"batch_requests": st.Requests(), "batch_tokens": st.Tokens(),
				"prefill_requests": st.PrefillRequests, "prefill_tokens": st.PrefillTokens,
				"decode_requests": st.DecodeRequests, "decode_tokens": st.DecodeTokens,
				"draft_tokens": st.DraftTokens, "step_ms": dur.Seconds() * 1e3,
				"running": st.Running, "waiting": st.Waiting, "kv_cache_usage": st.KVCacheUsage,
			},
		}, traceEvent{
			Name: "batch_tokens", Ph: "C", Pid: pid, Ts: micros(st.Start),
			Args: map[string]any{"prefill": st.PrefillTokens, "decode": st.DecodeTokens},
		}, traceEvent{
			Name: "requests", Ph: "C", Pid: pid, Ts: micros(st.End),
			Args: map[string]any{"running": st.Running, "waiting": st.Waiting},
		})
	}
	return trace{
		SchemaVersion: 1, TraceEvents: ev, DisplayTimeUnit: "ms",
		OtherData: map[string]any{
			"profiler": "vllm-sim", "model": info.ModelName, "gpu": info.GPU.Name,
			"session_start_us": micros(start), "session_end_us": micros(end),
			"steps": len(steps), "steps_dropped": dropped,
		},
	}
}

// writeTrace writes a session's trace into opts.Dir (created if missing)
// as WORKER.TIME.pt.trace.json(.gz), through a temporary file so that a
// reader never sees half of it, and returns its path.
func writeTrace(opts ProfilerOptions, start, end time.Time, steps []engine.Step, dropped int, info engine.Info) (string, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return "", fmt.Errorf("trace folder: %w", err)
	}
	var buf bytes.Buffer
	var enc *json.Encoder
	var zw *gzip.Writer
	name := fmt.Sprintf("vllm-sim_engine_pid%d.%d%s", os.Getpid(), end.UnixNano(), TraceSuffix)
	if opts.NoGzip {
		enc = json.NewEncoder(&buf)
	} else {
		zw = gzip.NewWriter(&buf)
		enc = json.NewEncoder(zw)
		name += ".gz"
	}
	if err := enc.Encode(buildTrace(start, end, steps, dropped, info)); err != nil {
		return "", err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return "", err
		}
	}
	f, err := os.CreateTemp(opts.Dir, ".trace-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Chmod(0o644) // as torch writes it, not CreateTemp's 0600
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	path := filepath.Join(opts.Dir, name)
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return path, nil
}
