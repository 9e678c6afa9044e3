package llmd

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"sync"

	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/server/simbuild"
)

// ImageRef is the image Image builds: llm-d-inference-sim Version in a
// FROM scratch image whose ENTRYPOINT is the simulator with OfflineFlag.
const ImageRef = "vllmperf/llm-d-inference-sim:" + Version

// dockerfile is this directory's Dockerfile.
//
//go:embed Dockerfile
var dockerfile []byte

// imageBuilt is set once this process has built ImageRef.
var imageBuilt struct {
	sync.Mutex
	done bool
}

// Image builds ImageRef from the embedded Dockerfile and a static Linux
// binary (Binary for linux: VLLMPERF_LLMD_BINARY, or built from tools/llmd)
// with simbuild.Build, once per process (Docker's layer cache makes a
// rebuild of the same binary quick), and returns ImageRef. Nothing is
// pulled. Without a Docker engine the error wraps server.ErrNoDocker. Run
// it with the container backend: server.WithImage(ref),
// server.WithEntrypoint("image"), and no GPUs (VLLMPERF_GPUS=none).
func Image(ctx context.Context) (string, error) {
	imageBuilt.Lock()
	defer imageBuilt.Unlock()
	if imageBuilt.done {
		return ImageRef, nil
	}
	if err := server.DockerAvailable(ctx); err != nil {
		return "", fmt.Errorf("llm-d-inference-sim image: %w: %v", server.ErrNoDocker, err)
	}
	path, err := binaryFor(ctx, "linux")
	if err != nil {
		return "", fmt.Errorf("llm-d-inference-sim image: %w", err)
	}
	bin, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("llm-d-inference-sim image: %w", err)
	}
	if err := checkStaticLinux(bin); err != nil {
		return "", fmt.Errorf("llm-d-inference-sim image: %s: %w", path, err)
	}
	if err := simbuild.Build(ctx, ImageRef, dockerfile, map[string][]byte{binaryName: bin}); err != nil {
		return "", fmt.Errorf("llm-d-inference-sim image: %w", err)
	}
	imageBuilt.done = true
	return ImageRef, nil
}
