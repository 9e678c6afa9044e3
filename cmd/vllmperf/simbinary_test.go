package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/server"
)

// TestRunSimImageOutsideCheckout is the command a user without the source
// runs: `VLLMPERF_SIM_BINARY=/path/vllm-sim vllmperf run --image sim ...`
// from a directory outside the checkout. The simulator image is built from
// the embedded Dockerfile and that binary alone.
func TestRunSimImageOutsideCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds vllmperf and vllm-sim; skipped with -short")
	}
	if err := server.DockerAvailable(context.Background()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Docker is required in CI: %v", err)
		}
		t.Skipf("no Docker engine (%v): skipping the container path; install docker.io and start dockerd to run it", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := t.TempDir()
	build := func(out, pkg string, env ...string) {
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", filepath.Join(bin, out), pkg)
		cmd.Env = append(os.Environ(), env...)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	build("vllmperf", ".")
	build("vllm-sim", "../vllm-sim", "CGO_ENABLED=0")
	outside := t.TempDir()
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "vllmperf"), "run", "--image", "sim", "--profile", "low-latency",
		"--concurrency", "2", "--requests", "4", "--max-tokens", "8", "--warmup", "0")
	cmd.Dir = outside
	cmd.Env = append(os.Environ(), "VLLMPERF_SIM_BINARY="+filepath.Join(bin, "vllm-sim"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("vllmperf run --image sim from %s: %v\n%s", outside, err, out)
	}
	if !strings.Contains(string(out), "Successful requests:                     4") {
		t.Errorf("want 4 successful requests:\n%s", out)
	}
}
