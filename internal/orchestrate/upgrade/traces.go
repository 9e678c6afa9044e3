package upgrade

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/outfile"
	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
)

// TracesDir is the folder under Config.Dir that receives the profiler's
// traces of the regressed points: traces/old and traces/new, one folder
// per point.
const TracesDir = "traces"

// TracesIndex lists the captured traces (TracesDir/index.md), linked from
// the report.
const TracesIndex = "index.md"

// TraceCapture is one side's profiler window on a regressed point.
type TraceCapture struct {
	Side    string // old or new
	Point   string // the run name: profile=P/scenario=S/KEY
	Capture *torchprof.Capture
}

// sideTraceDir is the folder a side's servers write their traces to.
func sideTraceDir(dir string, side int) string {
	return filepath.Join(dir, TracesDir, sideNames[side])
}

// traceOptions turn on the profiler of a side's servers when
// Config.TorchProfile is set (the folder made first; the profiler idles
// until a capture starts it).
func (c Config) traceOptions(side int) ([]server.Option, error) {
	if c.TorchProfile == nil {
		return nil, nil
	}
	d, err := filepath.Abs(sideTraceDir(c.Dir, side))
	if err == nil {
		err = os.MkdirAll(d, 0o755)
	}
	if err != nil {
		return nil, fmt.Errorf("upgrade gate: trace folder: %w", err)
	}
	return []server.Option{server.WithTorchProfiler(d)}, nil
}

// regressed are the targets with a REGRESSION row in rep, in order.
func (r *runner) regressed(rep *gate.Report) []Target {
	var names []string
	for _, row := range rep.Rows {
		if row.Verdict == gate.Regression {
			names = append(names, strings.TrimPrefix(row.Name, "Perf/"))
		}
	}
	var out []Target
	for _, prof := range r.profiles {
		for _, t := range r.byProfile[prof] {
			if slices.Contains(names, t.Name) {
				out = append(out, t)
			}
		}
	}
	return out
}

// captureTraces runs each regressed point once more per side, OLD then
// NEW, with the profiler over a steady window (pipeline.WithTorchProfile);
// these runs are not in the bench files. A capture that fails is kept
// with its error: the verdict stands without it.
func (r *runner) captureTraces(ctx context.Context, rep *gate.Report) []TraceCapture {
	if r.cfg.TorchProfile == nil || rep.Decision() != gate.Different {
		return nil
	}
	var out []TraceCapture
	for _, t := range r.regressed(rep) {
		for _, side := range []int{oldSide, newSide} {
			tc := TraceCapture{Side: sideNames[side], Point: t.Name}
			tc.Capture = r.capture(ctx, side, t)
			fmt.Fprintf(r.cfg.Log, "upgrade-gate: %s %s: %s\n", strings.ToUpper(tc.Side), t.Name, tc.Capture.Summary())
			out = append(out, tc)
		}
	}
	if len(out) > 0 {
		if err := writeTraceIndex(r.cfg.Dir, out); err != nil {
			fmt.Fprintf(r.cfg.Log, "upgrade-gate: traces index: %v\n", err)
		}
	}
	return out
}

// capture runs t on side's server with the profiler on.
func (r *runner) capture(ctx context.Context, side int, t Target) *torchprof.Capture {
	fail := func(err error) *torchprof.Capture { return &torchprof.Capture{Err: err, RunningAtStart: -1} }
	s, err := r.pool.get(ctx, side, t.Profile)
	if err != nil {
		return fail(err)
	}
	ss, ok := s.(suiteSession)
	if !ok {
		return fail(fmt.Errorf("this server cannot be profiled"))
	}
	set := *r.cfg.TorchProfile
	set.Dir, _ = filepath.Abs(sideTraceDir(r.cfg.Dir, side))
	res, err := pipeline.Run(ctx, ss.ss.Server, t.Point, pipeline.WithAPIKey(r.cfg.Suite.APIKey), pipeline.WithTorchProfile(set))
	if err != nil {
		return fail(err)
	}
	return res.TorchProfile
}

// writeTraceIndex writes TracesDir/index.md: per point and side, the
// trace files (relative links) or why there are none.
func writeTraceIndex(dir string, caps []TraceCapture) error {
	var b strings.Builder
	b.WriteString("# Profiler traces of the regressed points\n\nOpen a trace in https://ui.perfetto.dev or chrome://tracing.\n\n")
	for _, c := range caps {
		fmt.Fprintf(&b, "- %s, %s: ", c.Point, strings.ToUpper(c.Side))
		if c.Capture.Err != nil {
			fmt.Fprintf(&b, "no trace: %v\n", c.Capture.Err)
			continue
		}
		var links []string
		for _, f := range c.Capture.Files {
			rel, err := filepath.Rel(filepath.Join(dir, TracesDir), f)
			if err != nil {
				rel = f
			}
			links = append(links, fmt.Sprintf("[%s](%s)", filepath.Base(f), filepath.ToSlash(rel)))
		}
		fmt.Fprintf(&b, "%d events from %d running requests: %s\n", c.Capture.Events, c.Capture.RunningAtStart, strings.Join(links, ", "))
	}
	return outfile.ReplaceBytes(filepath.Join(dir, TracesDir, TracesIndex), 0o644, []byte(b.String()))
}
