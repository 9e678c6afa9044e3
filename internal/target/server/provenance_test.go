package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/target/profile"
)

func TestCPUModel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file, want string
	}{
		{"cpuinfo-x86.txt", "AMD EPYC 7B13 64-Core Processor x16"}, // x86: model name
		{"cpuinfo-arm.txt", "Arm CPU part 0xd4f x16"},              // Arm: no model name, the part number
	} {
		f, err := os.Open(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		got := cpuModel(f, 16)
		f.Close()
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.file, got, tc.want)
		}
	}
	if got := HostCPU(); got == "" {
		t.Error("HostCPU is empty")
	}
}

func TestDriverVersions(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "nvidia-smi.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if d, c := driverVersions(string(b)); d != "570.86.10" || c != "12.8" {
		t.Errorf("driver %q cuda %q, want 570.86.10 and 12.8", d, c)
	}
	if d, c := driverVersions("No devices were found"); d != Unknown || c != Unknown {
		t.Errorf("no header: driver %q cuda %q, want %s", d, c, Unknown)
	}
}

func TestProvenanceEnv(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		// only VLLM_* and OMP_*, sorted
		{map[string]string{"OMP_NUM_THREADS": "8", "VLLM_ATTENTION_BACKEND": "FLASHINFER", "PATH": "/bin", "VLLMPERF_GPUS": "0"}, "OMP_NUM_THREADS=8 VLLM_ATTENTION_BACKEND=FLASHINFER"},
		// a secret's value never shows
		{map[string]string{"VLLM_API_KEY": "sk-secret", "VLLM_HF_TOKEN": "hf_x"}, "VLLM_API_KEY=[REDACTED] VLLM_HF_TOKEN=[REDACTED]"},
		// nothing to record
		{map[string]string{"HOME": "/root"}, "(none)"},
	} {
		if got := ProvenanceEnv(tc.env); got != tc.want {
			t.Errorf("ProvenanceEnv(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

// TestProfileEnv: a profile's env: reaches the container (a secret-looking
// value masked wherever the request is printed) and is recorded for the
// in-process simulator; the external backend refuses it, saying why.
func TestProfileEnv(t *testing.T) {
	t.Parallel()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	p.Env = []profile.EnvVar{{Name: "OMP_NUM_THREADS", Value: "8"}, {Name: "VLLM_API_KEY", Value: "sk-profile-secret"}}
	s := defaultSettings()
	s.hfCache = t.TempDir()
	WithBackend(KindContainer)(&s)
	r, err := buildRequest(s, p)
	if err != nil {
		t.Fatal(err)
	}
	if string(r.env["OMP_NUM_THREADS"]) != "8" || string(r.env["VLLM_API_KEY"]) != "sk-profile-secret" {
		t.Errorf("container env %v lacks the profile's", r.env)
	}
	if got := r.String(); strings.Contains(got, "sk-profile-secret") || !strings.Contains(got, "OMP_NUM_THREADS=8") {
		t.Errorf("request printed as %s: want OMP_NUM_THREADS=8 and the key masked", got)
	}
	if got := ProvenanceEnv(r.containerEnv()); got != "OMP_NUM_THREADS=8 VLLM_API_KEY=[REDACTED] VLLM_NO_USAGE_STATS=1" {
		t.Errorf("server-env = %q", got)
	}
	if got := ProvenanceEnv(simEnv(p)); !strings.Contains(got, "OMP_NUM_THREADS=8") {
		t.Errorf("in-process server-env = %q, want the profile's", got)
	}
	_, err = Run(context.Background(), p, WithTarget("http://127.0.0.1:1"), WithBackend(KindExternal))
	if !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), "OMP_NUM_THREADS, VLLM_API_KEY") || !strings.Contains(err.Error(), "environment is its own") {
		t.Errorf("external with env: err = %v, want ErrSettings naming the variables and why", err)
	}
}
