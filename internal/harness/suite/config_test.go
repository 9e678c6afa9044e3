package suite

import (
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/harness/scenario"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // part of the error; "" for none
	}{
		// Nothing set: every profile and scenario, full size.
		{"defaults", nil, ""},
		// A profile that is not built in, with the ones that are.
		{"bad profile", map[string]string{EnvProfiles: "basic,turbo"}, `VLLMPERF_PROFILES: "turbo" is not built in: choose from basic, high-throughput`},
		// A scenario that is not built in.
		{"bad scenario", map[string]string{EnvScenarios: "sweep"}, `VLLMPERF_SCENARIOS: "sweep" is not built in`},
		// A size that is neither.
		{"bad size", map[string]string{EnvSize: "huge"}, `VLLMPERF_SIZE: size "huge": want full`},
		// A thresholds file that does not parse names its line.
		{"bad thresholds", map[string]string{EnvThresholds: "testdata/bad-thresholds.yaml"}, "testdata/bad-thresholds.yaml:1:1: unknown key"},
		// A backend that does not exist (package server's variable).
		{"bad backend", map[string]string{"VLLMPERF_BACKEND": "k8s"}, "k8s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{EnvSize, EnvProfiles, EnvScenarios, EnvThresholds, EnvResults, EnvSimArgs, EnvGPUName, "VLLMPERF_BACKEND"} {
				t.Setenv(k, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg, err := FromEnv(false)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if cfg.Size != scenario.Full || len(cfg.Profiles) != 5 || len(cfg.Scenarios) != 5 || cfg.Thresholds == nil {
					t.Errorf("defaults: %+v", cfg)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFromEnvShortAndSelection(t *testing.T) {
	t.Setenv(EnvSize, "")
	t.Setenv(EnvProfiles, "low-latency, basic")
	t.Setenv(EnvSimArgs, "--sim-slowdown 1.1")
	cfg, err := FromEnv(true)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Size != scenario.Quick {
		t.Errorf("-short: size %s, want quick", cfg.Size)
	}
	if got := strings.Join(cfg.Profiles, ","); got != "low-latency,basic" {
		t.Errorf("profiles %s: want the order given", got)
	}
	if got := strings.Join(cfg.SimArgs, " "); got != "--sim-slowdown 1.1" {
		t.Errorf("sim args %q", got)
	}
}

func TestUnitLines(t *testing.T) {
	t.Parallel()
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(s.UnitLines(), "\n")
	for _, want := range []string{"Unit ttft-p99-ns better=lower", "Unit tok/s better=higher", "Unit recommended-conc better=higher"} {
		if !strings.Contains(got, want) {
			t.Errorf("unit lines lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "kv-peak-%") {
		t.Error("kv-peak-% has no direction: no Unit line")
	}
}

func TestSimGPU(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"":                                engine.DefaultGPU,
		"--sim-gpu h100":                  "h100",
		"--max-num-seqs 4 --sim-gpu=a100": "a100",
	} {
		if got := simGPU(strings.Fields(args)); got != want {
			t.Errorf("simGPU(%q) = %s, want %s", args, got, want)
		}
	}
}
