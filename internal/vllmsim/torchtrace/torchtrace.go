package torchtrace

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// Suffix ends every trace file the simulator writes, before ".gz"
// (torch's tensorboard_trace_handler naming: WORKER.TIME.pt.trace.json).
const Suffix = ".pt.trace.json"

// Event is one Chrome trace event (the Trace Event Format, as
// torch.profiler writes it: ts and dur in microseconds).
type Event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// Trace is a Chrome trace file.
type Trace struct {
	SchemaVersion   int            `json:"schemaVersion"`
	TraceEvents     []Event        `json:"traceEvents"`
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
func buildTrace(start, end time.Time, steps []engine.Step, dropped int, info engine.Info) Trace {
	const pid, tid = 1, 1
	ev := []Event{
		{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": "vllm-sim EngineCore"}},
		{Name: "thread_name", Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"name": "engine steps"}},
	}
	for _, st := range steps {
		dur := st.End.Sub(st.Start)
		ev = append(ev, Event{
			Name: stepName(st), Cat: "user_annotation", Ph: "X", Pid: pid, Tid: tid,
			Ts: micros(st.Start), Dur: float64(dur.Nanoseconds()) / 1e3,
			Args: map[string]any{
				"batch_requests": st.Requests(), "batch_tokens": st.Tokens(),
				"prefill_requests": st.PrefillRequests, "prefill_tokens": st.PrefillTokens,
				"decode_requests": st.DecodeRequests, "decode_tokens": st.DecodeTokens,
				"draft_tokens": st.DraftTokens, "step_ms": dur.Seconds() * 1e3,
				"running": st.Running, "waiting": st.Waiting, "kv_cache_usage": st.KVCacheUsage,
			},
		}, Event{
			Name: "batch_tokens", Ph: "C", Pid: pid, Ts: micros(st.Start),
			Args: map[string]any{"prefill": st.PrefillTokens, "decode": st.DecodeTokens},
		}, Event{
			Name: "requests", Ph: "C", Pid: pid, Ts: micros(st.End),
			Args: map[string]any{"running": st.Running, "waiting": st.Waiting},
		})
	}
	return Trace{
		SchemaVersion: 1, TraceEvents: ev, DisplayTimeUnit: "ms",
		OtherData: map[string]any{
			"profiler": "vllm-sim", "model": info.ModelName, "gpu": info.GPU.Name,
			"session_start_us": micros(start), "session_end_us": micros(end),
			"steps": len(steps), "steps_dropped": dropped,
		},
	}
}

// Write writes a session's trace into opts.Dir (created if missing)
// as WORKER.TIME.pt.trace.json(.gz), through a temporary file so that a
// reader never sees half of it, and returns its path.
func Write(opts config.ProfilerOptions, start, end time.Time, steps []engine.Step, dropped int, info engine.Info) (string, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return "", fmt.Errorf("trace folder: %w", err)
	}
	var buf bytes.Buffer
	var enc *json.Encoder
	var zw *gzip.Writer
	name := fmt.Sprintf("vllm-sim_engine_pid%d.%d%s", os.Getpid(), end.UnixNano(), Suffix)
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
