package server

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFromEnv checks environment resolution and its error messages.
func TestFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		check   func(t *testing.T, c Config)
		wantErr string // substring; empty for success
	}{
		// Nothing set: the in-process simulator, pinned image.
		{"defaults", nil, func(t *testing.T, c Config) {
			if c.Backend != KindSim || c.Image != DefaultImage || c.Entrypoint != EntrypointServe || c.startupTimeout() != DefaultSimStartupTimeout {
				t.Errorf("got %s", c)
			}
		}, ""},
		// Everything set for a GPU runner.
		{"gpu runner", map[string]string{EnvBackend: "Container", EnvImage: "vllm/vllm-openai:v0.10.2", EnvGPUs: "0,1",
			EnvStartupTimeout: "30m", EnvHFCache: "/data/hf", EnvHFToken: fakeToken, EnvModel: "org/m", EnvEntrypoint: "api_server"},
			func(t *testing.T, c Config) {
				if c.Backend != KindContainer || c.Image != "vllm/vllm-openai:v0.10.2" || c.GPUs != "0,1" || c.StartupTimeout != 30*time.Minute ||
					c.HFCache != "/data/hf" || c.HFToken.Reveal() != fakeToken || c.Model != "org/m" || c.Entrypoint != EntrypointAPIServer {
					t.Errorf("got %s", c)
				}
				if c.startupTimeout() != 30*time.Minute {
					t.Errorf("startupTimeout() = %s", c.startupTimeout())
				}
			}, ""},
		// A vLLM image without an explicit timeout gets minutes, not 60 s.
		{"vllm image default timeout", map[string]string{EnvBackend: "container"}, func(t *testing.T, c Config) {
			if c.startupTimeout() != DefaultStartupTimeout || c.gpus() != "all" {
				t.Errorf("timeout %s gpus %s", c.startupTimeout(), c.gpus())
			}
		}, ""},
		// The simulator image defaults to no GPUs and a short start-up.
		{"sim image", map[string]string{EnvBackend: "container", EnvImage: "sim"}, func(t *testing.T, c Config) {
			if c.startupTimeout() != DefaultSimStartupTimeout || c.gpus() != "none" {
				t.Errorf("timeout %s gpus %s", c.startupTimeout(), c.gpus())
			}
		}, ""},
		// A misspelt backend.
		{"bad backend", map[string]string{EnvBackend: "docker"}, nil, "use sim, container or external"},
		// A timeout without a unit.
		{"bad timeout", map[string]string{EnvStartupTimeout: "600"}, nil, "Go duration"},
		// A negative timeout.
		{"negative timeout", map[string]string{EnvStartupTimeout: "-5m"}, nil, "positive"},
		// GPU list with a space inside an id.
		{"bad gpus", map[string]string{EnvGPUs: "0, ,1"}, nil, "device ids"},
		// external without a target yet: a flag may still give it.
		{"external, target later", map[string]string{EnvBackend: "external"}, func(t *testing.T, c Config) {
			if _, err := New(c); err == nil || !strings.Contains(err.Error(), EnvTarget) {
				t.Errorf("New without a target: err = %v, want one naming %s", err, EnvTarget)
			}
		}, ""},
		// An unknown entrypoint.
		{"bad entrypoint", map[string]string{EnvEntrypoint: "python"}, nil, "serve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := fromLookup(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
			if strings.Contains(c.String(), fakeToken) {
				t.Errorf("Config.String shows the token: %s", c)
			}
		})
	}
}

// TestParseGPUs checks the VLLMPERF_GPUS forms.
func TestParseGPUs(t *testing.T) {
	tests := []struct {
		in   string
		want GPUSelection
		ok   bool
	}{
		{"all", GPUSelection{All: true}, true},                      // every GPU
		{"ALL", GPUSelection{All: true}, true},                      // case does not matter
		{"none", GPUSelection{}, true},                              // explicit none
		{"", GPUSelection{}, true},                                  // unset
		{"0,1", GPUSelection{IDs: []string{"0", "1"}}, true},        // device indices
		{"GPU-3a1b", GPUSelection{IDs: []string{"GPU-3a1b"}}, true}, // a UUID
		{"0,", GPUSelection{}, false},                               // trailing comma
		{"count=2", GPUSelection{}, false},                          // docker's count= syntax is not supported
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

// TestPrepareEnvironment checks that the testcontainers variables are set
// only inside a container and only where unset.
func TestPrepareEnvironment(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, ".dockerenv")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		marker string
		preset map[string]string
		want   map[string]string
	}{
		// Inside a container, nothing set: both set.
		{"container", marker, nil, map[string]string{"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1", "TESTCONTAINERS_RYUK_DISABLED": "true"}},
		// Inside a container, the user's choice is kept.
		{"container, preset", marker, map[string]string{"TESTCONTAINERS_RYUK_DISABLED": "false"},
			map[string]string{"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1", "TESTCONTAINERS_RYUK_DISABLED": "false"}},
		// An ordinary Docker host: untouched.
		{"ordinary host", filepath.Join(dir, "absent"), nil, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range tt.preset {
				env[k] = v
			}
			prepareEnvironment(tt.marker, func(k string) (string, bool) { v, ok := env[k]; return v, ok },
				func(k, v string) error { env[k] = v; return nil })
			if len(env) != len(tt.want) {
				t.Errorf("env = %v, want %v", env, tt.want)
			}
			for k, v := range tt.want {
				if env[k] != v {
					t.Errorf("%s = %q, want %q", k, env[k], v)
				}
			}
		})
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
