// Package simbuild builds the images the container backend runs that
// vllmperf makes itself: the simulator image (a static vllm-sim in a FROM
// scratch image, build/sim/Dockerfile) and, through Build, any image of a
// Dockerfile and executables (internal/thirdparty/llmd's). It talks to
// Docker and go build, and to nothing of the server package.
package simbuild

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/testcontainers/testcontainers-go"

	simimage "github.com/vllmperf/vllmperf/build/sim"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// envSimBinary names a prebuilt static vllm-sim (package envvar declares
// it).
var envSimBinary = envvar.SimBinary.Name

// The simulator image: a static vllm-sim in a FROM scratch image
// (build/sim/Dockerfile, embedded), built from an in-memory context and
// tagged by a hash of the Dockerfile and the binary, so that an image
// built from the same binary is reused, and a changed binary gets a new one.
const (
	simImageRepo = "vllmperf/vllm-sim"
	// simTagHexDigits is how much of the hash the tag carries.
	simTagHexDigits = 12
	modulePath      = "github.com/vllmperf/vllmperf"
	simPackage      = "./cmd/vllm-sim"
	// buildLogLines is how much of a failed build's output an error carries.
	buildLogLines = 20
)

// simImages remembers, per binary source (a VLLMPERF_SIM_BINARY path, or ""
// for the checkout), the image this process already made sure of.
var simImages = struct {
	sync.Mutex
	tags map[string]string
}{tags: map[string]string{}}

// EnsureSim makes sure the simulator image of binaryPath (a static
// vllm-sim; "": built from the checkout) is local and returns its tag:
// reused when it exists, else built. logf hears which.
func EnsureSim(ctx context.Context, binaryPath string, logf func(format string, args ...any)) (string, error) {
	simImages.Lock()
	defer simImages.Unlock()
	if tag, ok := simImages.tags[binaryPath]; ok {
		return tag, nil
	}
	begin := time.Now()
	bin, err := simBinary(ctx, binaryPath)
	if err != nil {
		return "", fmt.Errorf("simulator image: %w", err)
	}
	tag := simImageTag(bin)
	exists, err := Exists(ctx, tag)
	if err != nil {
		return "", fmt.Errorf("simulator image: %w", err)
	}
	if exists {
		logf("vllm container: reusing %s", tag)
	} else {
		if err := buildSimImage(ctx, tag, bin); err != nil {
			return "", fmt.Errorf("simulator image: %w", err)
		}
		logf("vllm container: built %s in %s", tag, time.Since(begin).Round(time.Millisecond))
	}
	simImages.tags[binaryPath] = tag
	return tag, nil
}

// Forget clears the process's memory of the simulator images it made sure
// of, so that the next EnsureSim looks again (as another process would).
func Forget() {
	simImages.Lock()
	defer simImages.Unlock()
	clear(simImages.tags)
}

// Exists reports whether img is in the local image store.
func Exists(ctx context.Context, img string) (bool, error) {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return false, fmt.Errorf("docker: %w", err)
	}
	defer cli.Close()
	_, err = cli.ImageInspect(ctx, img)
	return err == nil, nil
}

// simImageTag names the image of bin: repo:hash(Dockerfile, binary).
func simImageTag(bin []byte) string {
	h := sha256.New()
	h.Write(simimage.Dockerfile)
	h.Write(bin)
	return simImageRepo + ":" + hex.EncodeToString(h.Sum(nil))[:simTagHexDigits]
}

// simBinary returns the static vllm-sim the image gets: VLLMPERF_SIM_BINARY
// when set, which works from any directory; else cmd/vllm-sim built from
// the checkout the process runs in.
func simBinary(ctx context.Context, binaryPath string) ([]byte, error) {
	if binaryPath != "" {
		bin, err := os.ReadFile(binaryPath)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envSimBinary, err)
		}
		if err := CheckStaticLinux(bin); err != nil {
			return nil, fmt.Errorf("%s=%s %w", envSimBinary, binaryPath, err)
		}
		return bin, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	return BuildSimBinary(ctx, root)
}

// elfMachines maps GOARCH to the ELF machine of its binaries.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// CheckStaticLinux refuses what cannot run as the entrypoint of a FROM
// scratch image on this machine's Docker: a file that is no Linux ELF
// executable, a dynamically linked one, or one for another architecture.
func CheckStaticLinux(bin []byte) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("is not a Linux executable (%v): build one with CGO_ENABLED=0 GOOS=linux go build -o vllm-sim ./cmd/vllm-sim", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("is dynamically linked, which a FROM scratch image cannot run: build it with CGO_ENABLED=0")
		}
	}
	if want, ok := elfMachines[runtime.GOARCH]; ok && f.Machine != want {
		return fmt.Errorf("is built for %s, this machine is %s: build it with GOARCH=%s", f.Machine, runtime.GOARCH, runtime.GOARCH)
	}
	return nil
}

// BuildSimBinary builds cmd/vllm-sim of the checkout at root as a static
// Linux binary.
func BuildSimBinary(ctx context.Context, root string) ([]byte, error) {
	dir, err := os.MkdirTemp("", "vllmperf-sim-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "vllm-sim")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, simPackage)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s: %w (or set %s to a prebuilt static vllm-sim)\n%s", simPackage, err, envSimBinary, lastLines(stderr.String(), buildLogLines))
	}
	return os.ReadFile(out)
}

// ModuleRoot finds the vllmperf checkout from the working directory up.
func ModuleRoot() (string, error) {
	start, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := start; ; {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(data)), "module "+modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("%s is not set and %s is not inside the %s checkout, so there is no vllm-sim to put in the image: set %s=/path/to/vllm-sim (built with CGO_ENABLED=0 go build -o vllm-sim ./cmd/vllm-sim)", envSimBinary, start, modulePath, envSimBinary)
		}
		dir = parent
	}
}

// buildSimImage builds the image tag from the embedded Dockerfile and bin.
func buildSimImage(ctx context.Context, tag string, bin []byte) error {
	return Build(ctx, tag, simimage.Dockerfile, map[string][]byte{"vllm-sim": bin})
}

// Build builds the image tag (repo:version) from dockerfile and
// executables (file name to content, mode 0755) put next to it in an
// in-memory build context, the way the simulator image is built: a FROM
// scratch Dockerfile pulls nothing. The image is kept; an existing one of
// that tag is replaced. Users: the simulator image (server.SimImage) and
// internal/thirdparty/llmd (the llm-d-inference-sim image).
func Build(ctx context.Context, tag string, dockerfile []byte, executables map[string][]byte) error {
	buildCtx, err := buildContext(dockerfile, executables)
	if err != nil {
		return err
	}
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return fmt.Errorf("docker: %w", err)
	}
	defer provider.Close()
	repo, version, _ := strings.Cut(tag, ":")
	var buildLog bytes.Buffer
	req := testcontainers.ContainerRequest{FromDockerfile: testcontainers.FromDockerfile{
		ContextArchive: bytes.NewReader(buildCtx),
		Repo:           repo,
		Tag:            version,
		KeepImage:      true,
		BuildLogWriter: &buildLog,
	}}
	if _, err := provider.BuildImage(ctx, &req); err != nil {
		return fmt.Errorf("docker build %s: %w\n%s", tag, err, lastLines(buildLog.String(), buildLogLines))
	}
	return nil
}

// buildContext is a build context as a tar archive: the Dockerfile and
// the executables, in name order.
func buildContext(dockerfile []byte, executables map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	write := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := write("Dockerfile", 0o644, dockerfile); err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(executables)) {
		if err := write(name, 0o755, executables[name]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
