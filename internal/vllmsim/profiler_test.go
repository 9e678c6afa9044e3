package vllmsim

import (
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/torchtrace"
)

// timedArgs run the continuous-batching engine (it has steps to trace),
// with its noise off.
var timedArgs = []string{"sim-model", "--sim-jitter", "0", "--sim-cold-start", "0", "--disable-log-stats"}

// readTrace decodes the one trace file in dir.
func readTrace(t *testing.T, dir string) torchtrace.Trace {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"+torchtrace.Suffix+"*"))
	if err != nil || len(files) != 1 {
		t.Fatalf("trace files in %s: %v (err %v), want exactly one", dir, files, err)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(files[0], ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", files[0], err)
		}
		r = zr
	}
	var tr torchtrace.Trace
	if err := json.NewDecoder(r).Decode(&tr); err != nil {
		t.Fatalf("%s: %v", files[0], err)
	}
	return tr
}

func TestProfilerTracesEngineSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(dir string) []string
		env  bool // the folder comes from VLLM_TORCH_PROFILER_DIR
		gz   bool
	}{
		// vLLM before --profiler-config: the environment variable.
		{name: "env", env: true, gz: true, args: func(string) []string { return nil }},
		// Newer vLLM: --profiler-config as JSON, plain JSON traces.
		{name: "json", args: func(d string) []string {
			return []string{"--profiler-config", `{"profiler":"torch","torch_profiler_dir":"` + d + `","torch_profiler_use_gzip":false}`}
		}},
		// The dotted form of the same fields.
		{name: "dotted", gz: true, args: func(d string) []string {
			return []string{"--profiler-config.profiler=torch", "--profiler-config.torch_profiler_dir", d}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.env {
				t.Setenv(config.ProfilerDirEnv, dir)
			}
			m := startSimRaw(t, append(append([]string{}, timedArgs...), tc.args(dir)...)...)
			if code, _ := m.get(t, "/start_profile"); code != 405 {
				t.Errorf("GET /start_profile with the profiler on: %d, want 405 as vLLM (a POST route)", code)
			}
			if code, body := m.post(t, "/start_profile", ""); code != 200 {
				t.Fatalf("POST /start_profile: %d %s", code, body)
			}
			body := `{"model":"sim-model","prompt":"a b c d e f g h","max_tokens":8,"ignore_eos":true}`
			if code, b := m.post(t, "/v1/completions", body); code != 200 {
				t.Fatalf("completion: %d %s", code, b)
			}
			if code, body := m.post(t, "/stop_profile", ""); code != 200 {
				t.Fatalf("POST /stop_profile: %d %s", code, body)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*"))
			if got := len(files) == 1 && strings.HasSuffix(files[0], ".gz"); got != tc.gz {
				t.Errorf("files %v: gzip %v, want %v", files, got, tc.gz)
			}
			tr := readTrace(t, dir)
			prefill, decode, steps := 0, 0, 0
			for _, e := range tr.TraceEvents {
				if e.Ph != "X" {
					continue
				}
				steps++
				prefill += int(e.Args["prefill_tokens"].(float64))
				decode += int(e.Args["decode_tokens"].(float64))
				if e.Dur <= 0 {
					t.Errorf("step %s: duration %v, want > 0", e.Name, e.Dur)
				}
			}
			// 8 output tokens: the prefill step makes the first, 7 decode
			// steps the rest.
			if steps != 8 || decode != 7 || prefill == 0 {
				t.Errorf("trace: %d steps, %d prefill and %d decode tokens; want 8 steps, prefill > 0, 7 decode", steps, prefill, decode)
			}
		})
	}
}

func TestProfilerEndpointsAbsentWithoutConfig(t *testing.T) {
	m := startSim(t)
	for _, path := range []string{"/start_profile", "/stop_profile"} {
		if code, _ := m.post(t, path, ""); code != 404 {
			t.Errorf("POST %s without a profiler: %d, want 404 as vLLM", path, code)
		}
		if code, _ := m.get(t, path); code != 404 {
			t.Errorf("GET %s without a profiler: %d, want 404 as vLLM", path, code)
		}
	}
}

func TestProfilerConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--profiler-config", `{"profiler":"torch"}`}, "torch_profiler_dir must be set"},
		{[]string{"--profiler-config", `{"torch_profiler_dir":"/x"}`}, "only applicable when profiler is set to 'torch'"},
		{[]string{"--profiler-config", `{"profiler":"cuda","torch_profiler_dir":"/x"}`}, "torch profiler traces only"},
		{[]string{"--profiler-config", `{"profiler":"torch","torch_profiler_dir":"/x","bogus":1}`}, "unknown ProfilerConfig field 'bogus'"},
		{[]string{"--profiler-config", `{profiler`}, "invalid JSON"},
		{[]string{"--profiler-config.torch_profiler_use_gzip=maybe"}, "invalid boolean"},
	} {
		_, err := config.ParseArgs(append([]string{"m"}, tc.args...))
		var ae *config.ArgError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseArgs(%q): %v, want an ArgError with %q", tc.args, err, tc.want)
		}
	}
}
