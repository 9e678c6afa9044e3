package server

import (
	"os"
	"path/filepath"
	"testing"
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
