package server

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server/simbuild"
)

// buildStaticSim builds cmd/vllm-sim as the image needs it, into dir.
func buildStaticSim(t *testing.T, dir string) string {
	t.Helper()
	root, err := simbuild.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := simbuild.BuildSimBinary(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if err := simbuild.CheckStaticLinux(bin); err != nil {
		t.Fatalf("the binary go build made %v", err)
	}
	path := filepath.Join(dir, "vllm-sim")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSimImageOutsideCheckout runs the simulator image from a directory
// outside the module with VLLMPERF_SIM_BINARY alone: no go.mod, no
// Dockerfile on disk, no go build. The image is reused once it exists, and
// without the binary the error says to set it.
func TestSimImageOutsideCheckout(t *testing.T) {
	needDocker(t)
	bin := buildStaticSim(t, t.TempDir())
	outside := t.TempDir()
	t.Chdir(outside)
	if _, err := os.Stat(filepath.Join(outside, "go.mod")); err == nil {
		t.Fatal("the temporary directory has a go.mod")
	}
	if _, err := simbuild.ModuleRoot(); err == nil {
		t.Fatalf("%s is inside a checkout: the test needs a directory outside it", outside)
	}
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	run := func(opts ...Option) (string, error) {
		var log bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		s, err := Run(ctx, p, append([]Option{WithBackend(KindContainer), WithImage(SimImage), WithLog(&log)}, opts...)...)
		if err == nil {
			checkStream(t, streamChat(t, s.BaseURL(), s.Model()))
			if cerr := s.Close(context.Background()); cerr != nil {
				t.Errorf("close: %v", cerr)
			}
		}
		return log.String(), err
	}
	if log, err := run(withSimBinary(bin)); err != nil {
		t.Fatalf("with %s from %s: %v\n%s", envSimBinary, outside, err, log)
	}
	// Another process (here: this one, forgetting what it built) finds the
	// image built from the same binary and does not build it again.
	simbuild.Forget()
	log, err := run(withSimBinary(bin))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log, "vllm container: reusing vllmperf/vllm-sim:") || strings.Contains(log, "built vllmperf/vllm-sim") {
		t.Errorf("second run did not reuse the image:\n%s", log)
	}
	// Without the binary there is nothing to build from: say what to set.
	simbuild.Forget()
	_, err = run()
	if err == nil || !strings.Contains(err.Error(), envSimBinary+" is not set and "+outside+" is not inside") {
		t.Errorf("without %s outside the checkout: err = %v, want it to name the variable and the directory", envSimBinary, err)
	}
	simbuild.Forget()
}

// TestStaticSimBuildFromCheckout: inside the checkout the binary is built
// from source (what go build would do by hand) and passes the image's check.
func TestStaticSimBuildFromCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/vllm-sim; skipped with -short")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not on PATH")
	}
	buildStaticSim(t, t.TempDir())
}
