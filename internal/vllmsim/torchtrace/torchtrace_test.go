package torchtrace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// TestWrite: a session becomes one trace file in the folder, one complete
// event per step named as vLLM annotates a step, and the session's
// figures in otherData.
func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "traces") // created by Write
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []engine.Step{
		{Start: t0, End: t0.Add(20 * time.Millisecond), PrefillRequests: 1, PrefillTokens: 100, Running: 1},
		{Start: t0.Add(20 * time.Millisecond), End: t0.Add(25 * time.Millisecond), DecodeRequests: 1, DecodeTokens: 1, Running: 1},
	}
	path, err := Write(config.ProfilerOptions{Profiler: config.ProfilerTorch, Dir: dir, NoGzip: true}, t0, t0.Add(time.Second), steps, 3, engine.Info{ModelName: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir || !strings.HasSuffix(path, Suffix) {
		t.Fatalf("trace at %s, want a *%s file in %s", path, Suffix, dir)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tr Trace
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var names []string
	for _, ev := range tr.TraceEvents {
		if ev.Ph == "X" {
			names = append(names, ev.Name)
		}
	}
	want := []string{"execute_context_1(100)_generation_0(0)", "execute_context_0(0)_generation_1(1)"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("step events %v, want %v", names, want)
	}
	if tr.OtherData["steps"] != 2.0 || tr.OtherData["steps_dropped"] != 3.0 || tr.OtherData["model"] != "m" {
		t.Errorf("otherData %v, want 2 steps, 3 dropped, model m", tr.OtherData)
	}
}
