package server

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/testcontainers/testcontainers-go"
)

// The simulator image: cmd/vllm-sim built as a static binary and copied
// into a FROM scratch image (build/sim/Dockerfile), so that no registry is
// needed. It is built once per process and tagged simImageTag.
const (
	simImageRepo = "vllmperf/vllm-sim"
	simImageVer  = "dev"
	simImageTag  = simImageRepo + ":" + simImageVer
	modulePath   = "github.com/vllmperf/vllmperf"
	simPackage   = "./cmd/vllm-sim"
	simDockerDir = "build/sim"
)

var (
	simImageMu    sync.Mutex
	simImageBuilt bool
)

// ensureSimImage builds the simulator image once per process; a failed
// build is retried by the next call.
func ensureSimImage(ctx context.Context, cfg Config) error {
	simImageMu.Lock()
	defer simImageMu.Unlock()
	if simImageBuilt {
		return nil
	}
	begin := time.Now()
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "vllmperf-sim-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dockerfile, err := os.ReadFile(filepath.Join(root, simDockerDir, "Dockerfile"))
	if err != nil {
		return fmt.Errorf("read the simulator's Dockerfile: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfile, 0o644); err != nil {
		return err
	}
	bin := filepath.Join(dir, "vllm-sim")
	if cfg.SimBinary != "" {
		data, err := os.ReadFile(cfg.SimBinary)
		if err != nil {
			return fmt.Errorf("%s: %w", EnvSimBinary, err)
		}
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			return err
		}
	} else if err := buildSimBinary(ctx, root, bin); err != nil {
		return err
	}
	var buildLog bytes.Buffer
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	defer provider.Close()
	req := testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		Context:        dir,
		Repo:           simImageRepo,
		Tag:            simImageVer,
		KeepImage:      true,
		BuildLogWriter: &buildLog,
	}}
	if _, err := provider.BuildImage(ctx, &req); err != nil {
		return fmt.Errorf("docker build %s: %w\n%s", simImageTag, err, lastLines(buildLog.String(), 20))
	}
	simImageBuilt = true
	cfg.logf("vllm container: built %s in %s", simImageTag, time.Since(begin).Round(time.Millisecond))
	return nil
}

// buildSimBinary builds cmd/vllm-sim as a static Linux binary at out.
func buildSimBinary(ctx context.Context, root, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, simPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s (for the simulator image): %w\n%s", simPackage, err, lastLines(stderr.String(), 20))
	}
	return nil
}

// moduleRoot finds the vllmperf checkout from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(data)), "module "+modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("the simulator image is built from source: run inside the %s checkout, or set %s to a static vllm-sim binary", modulePath, EnvSimBinary)
		}
		dir = parent
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
