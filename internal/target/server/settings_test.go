package server

import (
	"context"
	"errors"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// fromEnv applies the options FromEnv reads from env to the defaults.
func fromEnv(env map[string]string) (settings, error) {
	opts, err := fromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	s := defaultSettings()
	for _, o := range opts {
		o(&s)
	}
	return s, err
}

// TestFromEnv checks environment resolution and its error messages.
func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		check   func(t *testing.T, s settings)
		wantErr string // substring; empty for success
	}{
		// Nothing set: the in-process simulator, pinned image.
		{"defaults", nil, func(t *testing.T, s settings) {
			if s.backend != KindSim || s.image != DefaultImage || s.entrypoint != "" || s.timeout() != defaultSimStartupTimeout {
				t.Errorf("got %+v", s)
			}
		}, ""},
		// Everything set for a GPU runner.
		{"gpu runner", map[string]string{envBackend: "Container", envImage: "vllm/vllm-openai:v0.10.2", envGPUs: "0,1",
			envStartupTimeout: "30m", envHFCache: "/data/hf", envHFToken: fakeToken, envModel: "org/m", envEntrypoint: "api_server"},
			func(t *testing.T, s settings) {
				if s.backend != KindContainer || s.image != "vllm/vllm-openai:v0.10.2" || s.gpus != "0,1" || s.timeout() != 30*time.Minute ||
					s.hfCache != "/data/hf" || string(s.hfToken) != fakeToken || s.model != "org/m" || s.entrypoint != "api_server" {
					t.Errorf("got %+v", s)
				}
			}, ""},
		// VLLMPERF_FAMILY picks the family and, with no image chosen, its image.
		{"sglang family", map[string]string{envFamily: "sglang", envBackend: "container"}, func(t *testing.T, s settings) {
			if s.family != serverfamily.SGLang || s.image != serverfamily.SGLang.Image {
				t.Errorf("family %v image %q", s.family, s.image)
			}
		}, ""},
		// An image chosen beside the family stays.
		{"sglang family own image", map[string]string{envFamily: "sglang", envBackend: "container", envImage: "lmsysorg/sglang:dev"}, func(t *testing.T, s settings) {
			if s.image != "lmsysorg/sglang:dev" {
				t.Errorf("image %q", s.image)
			}
		}, ""},
		// The entrypoint is checked against the chosen family's layouts.
		{"sglang layout", map[string]string{envFamily: "sglang", envEntrypoint: "serve"}, nil, `use launch_server (`},
		{"unknown family", map[string]string{envFamily: "tgi"}, nil, envFamily + `: server family "tgi" is unknown: use one of `},
		// VLLMPERF_HF_TOKEN wins over Hugging Face's HF_TOKEN.
		{"own hf token", map[string]string{envOwnHFToken: fakeToken, envHFToken: "hf_other"}, func(t *testing.T, s settings) {
			if string(s.hfToken) != fakeToken {
				t.Errorf("hfToken is not VLLMPERF_HF_TOKEN's")
			}
		}, ""},
		// A vLLM image without an explicit timeout gets minutes, not 60 s.
		{"vllm image default timeout", map[string]string{envBackend: "container"}, func(t *testing.T, s settings) {
			if s.timeout() != defaultStartupTimeout || s.gpuList() != "all" {
				t.Errorf("timeout %s gpus %s", s.timeout(), s.gpuList())
			}
		}, ""},
		// The simulator image defaults to no GPUs and a short start-up.
		{"sim image", map[string]string{envBackend: "container", envImage: "sim"}, func(t *testing.T, s settings) {
			if s.timeout() != defaultSimStartupTimeout || s.gpuList() != "none" {
				t.Errorf("timeout %s gpus %s", s.timeout(), s.gpuList())
			}
		}, ""},
		// A prebuilt simulator binary.
		{"sim binary", map[string]string{envSimBinary: "/opt/vllm-sim"}, func(t *testing.T, s settings) {
			if s.simBinary != "/opt/vllm-sim" {
				t.Errorf("simBinary %q", s.simBinary)
			}
		}, ""},
		// A target without its scheme names the variable it came from.
		{"bad target", map[string]string{envTarget: "127.0.0.1:8000"}, nil, `VLLMPERF_TARGET: "127.0.0.1:8000" has no scheme`},
		// A misspelt backend.
		{"bad backend", map[string]string{envBackend: "docker"}, nil, "use sim, container or external"},
		// A timeout without a unit.
		{"bad timeout", map[string]string{envStartupTimeout: "600"}, nil, "Go duration"},
		// A negative timeout.
		{"negative timeout", map[string]string{envStartupTimeout: "-5m"}, nil, "positive"},
		// GPU list with a space inside an id.
		{"bad gpus", map[string]string{envGPUs: "0, ,1"}, nil, "device ids"},
		// A third-party image with its own ENTRYPOINT (llm-d-inference-sim).
		{"image entrypoint", map[string]string{envBackend: "container", envImage: "vllmperf/llm-d-inference-sim:v0.10.2", envEntrypoint: "image", envGPUs: "none"},
			func(t *testing.T, s settings) {
				if s.entrypoint != "image" || s.gpuList() != "none" {
					t.Errorf("entrypoint %q gpus %s", s.entrypoint, s.gpuList())
				}
			}, ""},
		// An unknown entrypoint: the message lists the three.
		{"bad entrypoint", map[string]string{envEntrypoint: "python"}, nil, "VLLMPERF_ENTRYPOINT: entrypoint \"python\": use serve"},
		// The list names the third one.
		{"bad entrypoint lists image", map[string]string{envEntrypoint: "own"}, nil, "or image (the image's own ENTRYPOINT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := fromEnv(tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrSettings) {
					t.Fatalf("err = %v, want an ErrSettings mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := s.validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
			tt.check(t, s)
		})
	}
}

// TestRunRefusesSettings: settings Run cannot use fail before anything
// starts, wrapping ErrSettings, and later options override earlier ones.
func TestRunRefusesSettings(t *testing.T) {
	testphase.Fault(t)
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts []Option
		want string
	}{
		// external without a target (from the environment, no flag after it).
		{"external, no target", []Option{WithBackend(KindExternal)}, "backend external needs VLLMPERF_TARGET"},
		// A backend name that is not one.
		{"unknown backend", []Option{WithBackend("k8s")}, `unknown backend "k8s"`},
		// A target that is no URL.
		{"bad target", []Option{WithBackend(KindExternal), WithTarget("127.0.0.1:8000")}, "want the server's base URL"},
		// The last backend wins: the external one, still without a target.
		{"later option wins", []Option{WithBackend(KindSim), WithBackend(KindExternal)}, "needs VLLMPERF_TARGET"},
		// An entrypoint that is none of serve, api_server, image.
		{"unknown entrypoint", []Option{WithBackend(KindContainer), WithEntrypoint("entrypoint.sh")}, `entrypoint "entrypoint.sh": use serve`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Run(context.Background(), p, tt.opts...)
			if err == nil {
				s.Close(context.Background())
				t.Fatal("Run succeeded")
			}
			if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "start vllm: ") {
				t.Errorf("err = %v, want start vllm: ... wrapping ErrSettings, mentioning %q", err, tt.want)
			}
		})
	}
}

// TestParseGPUs checks the VLLMPERF_GPUS forms.
func TestParseGPUs(t *testing.T) {
	tests := []struct {
		in   string
		want gpuSelection
		ok   bool
	}{
		{"all", gpuSelection{All: true}, true},                      // every GPU
		{"ALL", gpuSelection{All: true}, true},                      // case does not matter
		{"none", gpuSelection{}, true},                              // explicit none
		{"", gpuSelection{}, true},                                  // unset
		{"0,1", gpuSelection{IDs: []string{"0", "1"}}, true},        // device indices
		{"GPU-3a1b", gpuSelection{IDs: []string{"GPU-3a1b"}}, true}, // a UUID
		{"0,", gpuSelection{}, false},                               // trailing comma
		{"count=2", gpuSelection{}, false},                          // docker's count= syntax is not supported
	}
	for _, tt := range tests {
		got, err := parseGPUs(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("parseGPUs(%q) err = %v, want ok=%v", tt.in, err, tt.ok)
			continue
		}
		if tt.ok && (got.All != tt.want.All || !slices.Equal(got.IDs, tt.want.IDs)) {
			t.Errorf("parseGPUs(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// TestLineRing checks line splitting, the partial tail and the cap.
func TestLineRing(t *testing.T) {
	r := newLineRing(nil)
	r.max = 3
	for _, s := range []string{"a\nb", "\r\nc\n", "d\ne"} {
		if _, err := r.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := r.Last(0), []string{"b", "c", "d", "e"}; !slices.Equal(got, want) {
		t.Errorf("Last(0) = %q, want %q", got, want)
	}
	if got, want := r.Last(2), []string{"d", "e"}; !slices.Equal(got, want) {
		t.Errorf("Last(2) = %q, want %q", got, want)
	}
}

// TestParseKind checks backend names.
func TestParseKind(t *testing.T) {
	for in, want := range map[string]Kind{"": KindSim, "sim": KindSim, " External ": KindExternal, "container": KindContainer} {
		if got, err := ParseKind(in); err != nil || got != want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseKind("k8s"); err == nil {
		t.Error("ParseKind(k8s) succeeded")
	}
}
