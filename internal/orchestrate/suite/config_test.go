package suite

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
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
		{"bad profile", map[string]string{EnvProfiles: "basic,turbo"}, `VLLMPERF_PROFILES: "turbo" is not built in: choose from ` + strings.Join(profile.Names(), ", ")},
		// A scenario that is not built in.
		{"bad scenario", map[string]string{EnvScenarios: "sweep"}, `VLLMPERF_SCENARIOS: "sweep" is not built in`},
		// A size that is neither.
		{"bad size", map[string]string{EnvSize: "huge"}, `VLLMPERF_SIZE: size "huge": want full`},
		// A thresholds file that does not parse names its line.
		{"bad thresholds", map[string]string{EnvThresholds: "testdata/bad-thresholds.yaml"}, "testdata/bad-thresholds.yaml:1:1: unknown key"},
		// A backend that does not exist (package server's variable).
		{"bad backend", map[string]string{"VLLMPERF_BACKEND": "k8s"}, "k8s"},
		// Profiles are flag sets the suite starts servers with: a
		// deployment reached by URL has its own.
		{"profiles with external", map[string]string{"VLLMPERF_BACKEND": "external", "VLLMPERF_TARGET": "http://127.0.0.1:8000", EnvProfiles: "basic,low-latency"}, "VLLMPERF_PROFILES=basic,low-latency: the external backend measures the deployment at VLLMPERF_TARGET as it runs, with its own flags"},
		// A label that cannot be part of a benchmark name.
		{"bad label", map[string]string{"VLLMPERF_BACKEND": "external", "VLLMPERF_TARGET": "http://127.0.0.1:8000", EnvLabel: "prod/h100"}, `VLLMPERF_LABEL: label "prod/h100": use letters, digits`},
		// A label without a deployment to name.
		{"label without external", map[string]string{EnvLabel: "prod"}, "VLLMPERF_LABEL=prod names a deployment the suite did not start, but the backend is sim"},
		// Strictness is a boolean.
		{"bad strict", map[string]string{EnvStrict: "maybe"}, `VLLMPERF_STRICT="maybe": want true or false`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{EnvSize, EnvProfiles, EnvScenarios, EnvThresholds, EnvResults, EnvSimArgs, EnvGPUName, EnvLabel, EnvStrict, "VLLMPERF_BACKEND", "VLLMPERF_TARGET"} {
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
				if cfg.Size != scenario.Full || !slices.Equal(cfg.Profiles, profile.Names()) || !slices.Equal(cfg.Scenarios, scenario.DefaultNames()) || cfg.Thresholds == nil {
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

// TestFromEnvExternal: a deployment reached by URL is one subject, named
// external or by VLLMPERF_LABEL.
func TestFromEnvExternal(t *testing.T) {
	for _, tc := range []struct{ label, want string }{{"", "external"}, {"prod-h100", "prod-h100"}} {
		t.Setenv(EnvProfiles, "")
		t.Setenv(EnvLabel, tc.label)
		t.Setenv("VLLMPERF_BACKEND", "external")
		t.Setenv("VLLMPERF_TARGET", "http://127.0.0.1:8000")
		cfg, err := FromEnv(true)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(cfg.Profiles, ",") != tc.want {
			t.Errorf("label %q: profiles %v, want [%s]", tc.label, cfg.Profiles, tc.want)
		}
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !s.External() || s.StartsServers() || !s.Shares() {
			t.Errorf("external %v, starts servers %v, shares %v", s.External(), s.StartsServers(), s.Shares())
		}
	}
}

// TestFromEnvStrict: VLLMPERF_STRICT overrides the file's checks.strict.
func TestFromEnvStrict(t *testing.T) {
	for v, want := range map[string]bool{"": true, "false": false, "true": true} {
		t.Setenv(EnvStrict, v)
		cfg, err := FromEnv(true)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Thresholds.Scope("basic", "ttft-tpot").Checks.Strict; got != want {
			t.Errorf("VLLMPERF_STRICT=%q: strict %v, want %v", v, got, want)
		}
	}
}

// TestUnitLines: the bench output's Unit lines are package units' gated
// units, in its order, with its directions (thresholds.yaml names none).
func TestUnitLines(t *testing.T) {
	t.Parallel()
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, u := range units.All() {
		if u.Gated() {
			want = append(want, fmt.Sprintf("Unit %s better=%s", u.Name, u.Better))
		}
	}
	if got := s.UnitLines(); !slices.Equal(got, want) {
		t.Errorf("unit lines\n got %q\nwant %q", got, want)
	}
}

func TestSimGPU(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"":                                presets.DefaultGPU,
		"--sim-gpu h100":                  "h100",
		"--max-num-seqs 4 --sim-gpu=a100": "a100",
	} {
		if got := simGPU(strings.Fields(args)); got != want {
			t.Errorf("simGPU(%q) = %s, want %s", args, got, want)
		}
	}
}
