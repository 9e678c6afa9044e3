package perfgate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// TestGatePreset: VLLMPERF_GATE fills in the preset's count, size,
// profiles and starts where they are unset (its starts not beside the GPU
// sets, which run a process a profile), leaves what is set alone, and
// refuses a name it does not know, naming the presets.
func TestGatePreset(t *testing.T) {
	for _, tc := range []struct {
		name, gate, count, profiles, size, starts, sets string
		oldCount                                        string // COUNT, envvar.Count's old name
		wantCount, wantProfiles, wantSize, wantStarts   string
		wantErr                                         string
	}{
		{name: "unset: nothing changes", wantCount: "", wantProfiles: "", wantSize: ""},
		{name: "pr", gate: "pr", wantCount: "10", wantProfiles: "basic,high-throughput,low-latency", wantSize: "quick", wantStarts: "5"},
		{name: "pr, set by hand wins", gate: " pr ", count: "4", profiles: "basic", size: "full", starts: "2", wantCount: "4", wantProfiles: "basic", wantSize: "full", wantStarts: "2"},
		{name: "pr, a count by hand under the old name wins", gate: "pr", oldCount: "4", wantCount: "4", wantProfiles: "basic,high-throughput,low-latency", wantSize: "quick", wantStarts: "5"},
		{name: "pr on GPU sets: one start", gate: "pr", sets: "0;1", wantCount: "10", wantProfiles: "basic,high-throughput,low-latency", wantSize: "quick", wantStarts: ""},
		{name: "full: every profile", gate: "full", wantCount: "10", wantProfiles: "", wantSize: "full"},
		{name: "unknown", gate: "nightly", wantErr: `VLLMPERF_GATE="nightly": want one of pr, full`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvGate, tc.gate)
			t.Setenv(envvar.Count.Name, tc.count)
			t.Setenv(envvar.Count.Old, tc.oldCount)
			t.Setenv(envvar.Profiles.Name, tc.profiles)
			t.Setenv(envvar.Size.Name, tc.size)
			t.Setenv(envvar.Starts.Name, tc.starts)
			t.Setenv(envvar.GPUSets.Name, tc.sets)
			t.Setenv(envvar.Sequential.Name, "")
			_, err := applyGatePreset()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := envvar.Count.Lookup(); got != tc.wantCount {
				t.Errorf("the count read is %q, want %q", got, tc.wantCount)
			}
			for v, want := range map[string]string{envvar.Profiles.Name: tc.wantProfiles, envvar.Size.Name: tc.wantSize, envvar.Starts.Name: tc.wantStarts} {
				if got := os.Getenv(v); got != want {
					t.Errorf("%s=%q, want %q", v, got, want)
				}
			}
		})
	}
}

// TestOptionsFromEnvGatePreset: the preset reaches the options' count,
// and a bad name is the options' error.
func TestOptionsFromEnvGatePreset(t *testing.T) {
	t.Setenv(EnvGate, "pr")
	t.Setenv(envvar.Count.Name, "")
	t.Setenv(envvar.Count.Old, "")
	t.Setenv(envvar.Profiles.Name, "")
	t.Setenv(envvar.Size.Name, "")
	t.Setenv(envvar.Starts.Name, "")
	t.Setenv(envvar.GPUSets.Name, "")
	t.Setenv(envvar.Sequential.Name, "")
	t.Setenv("VLLMPERF_BASELINE_STORE", t.TempDir())
	o, err := OptionsFromEnv(nil, nil)
	if err != nil || o.Count != PRGate.Count || o.Starts != PRGate.Starts {
		t.Fatalf("count %d, starts %d, err %v: want %d and %d", o.Count, o.Starts, err, PRGate.Count, PRGate.Starts)
	}
	t.Setenv(EnvGate, "bogus")
	if _, err := OptionsFromEnv(nil, nil); err == nil || !strings.Contains(err.Error(), EnvGate) {
		t.Fatalf("err %v: want one naming %s", err, EnvGate)
	}
}

// TestWorkflowPRGateProfiles: perf-gate.yml's matrix for the pr preset
// lists PRGate's profiles.
func TestWorkflowPRGateProfiles(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docfigures.ModuleRoot(t), ".github", "workflows", "perf-gate.yml"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(PRGate.Profiles))
	for i, p := range PRGate.Profiles {
		quoted[i] = `"` + p + `"`
	}
	want := "PR_GATE_PROFILES: '[" + strings.Join(quoted, ",") + "]'"
	if !strings.Contains(string(data), want) {
		t.Errorf("perf-gate.yml lacks %s (perfgate.PRGate's profiles): make the two agree", want)
	}
}
