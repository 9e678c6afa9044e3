package llmd

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

const (
	// mainModule is the vllmperf module, whose checkout holds tools/llmd.
	mainModule = "github.com/vllmperf/vllmperf"
	// toolsDir is the tools module, relative to the checkout's root.
	toolsDir = "tools/llmd"
	// binaryName is the binary in the checkout's bin/, as make llmd names it.
	binaryName = "llm-d-inference-sim"
	// buildLogLines is how much of a failed build's output an error carries.
	buildLogLines = 20
	// lockPoll is how often a process waits for another one's build.
	lockPoll = 200 * time.Millisecond
)

// built remembers, per GOOS, the binary this process made sure of, or why
// it could not (a failure that is not the caller's context ending).
var built = struct {
	sync.Mutex
	path map[string]string
	err  map[string]error
}{path: map[string]string{}, err: map[string]error{}}

// Binary returns the path of an llm-d-inference-sim for this machine:
// VLLMPERF_LLMD_BINARY when set, else bin/llm-d-inference-sim of the
// vllmperf checkout the working directory is in, reused while its build
// information shows Version, static and for this machine, and otherwise
// built from tools/llmd (CGO_ENABLED=0; minutes the first time, with the
// Go module proxy). Once per process; a failure is remembered too, unless
// ctx ended. Concurrent processes build it once (a lock file in bin/).
func Binary(ctx context.Context) (string, error) {
	return binaryFor(ctx, runtime.GOOS)
}

// binaryFor is Binary for an operating system (this machine's
// architecture): linux for the image.
func binaryFor(ctx context.Context, goos string) (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		return checkFile(p)
	}
	built.Lock()
	defer built.Unlock()
	if p, ok := built.path[goos]; ok {
		return p, nil
	}
	if err, ok := built.err[goos]; ok {
		return "", err
	}
	p, err := ensureBinary(ctx, goos, runtime.GOARCH)
	switch {
	case err == nil:
		built.path[goos] = p
	case ctx.Err() == nil:
		built.err[goos] = err
	}
	return p, err
}

// checkFile returns the absolute path of the prebuilt binary p, or says
// what is wrong with it.
func checkFile(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("%s=%s: %w", EnvBinary, p, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s=%s: %w (build one with make llmd)", EnvBinary, p, err)
	case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("%s=%s is not an executable file (build one with make llmd)", EnvBinary, p)
	}
	return abs, nil
}

// ensureBinary returns the checkout's binary for goos/goarch, built when
// missing or stale, under a lock file so that concurrent test processes
// build it once.
func ensureBinary(ctx context.Context, goos, goarch string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	name := binaryName
	if goos != runtime.GOOS {
		name += "-" + goos + "-" + goarch
	}
	out := filepath.Join(root, "bin", name)
	if upToDate(out, goos, goarch) == nil {
		return out, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(ctx, out+".lock")
	if err != nil {
		return "", fmt.Errorf("llm-d-inference-sim: lock %s: %w", out+".lock", err)
	}
	defer unlock()
	// Another process may have built it while this one waited.
	if upToDate(out, goos, goarch) == nil {
		return out, nil
	}
	if err := build(ctx, filepath.Join(root, toolsDir), out, goos, goarch); err != nil {
		return "", err
	}
	if err := upToDate(out, goos, goarch); err != nil {
		return "", fmt.Errorf("llm-d-inference-sim built from %s: %w: make %s/go.mod and llmd.Version agree", toolsDir, err, toolsDir)
	}
	return out, nil
}

// upToDate reports why the binary at path is not llm-d-inference-sim
// Version built static for goos/goarch, or nil when it is.
func upToDate(path, goos, goarch string) error {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return err
	}
	if bi.Main.Path != ModulePath || bi.Main.Version != Version {
		return fmt.Errorf("it is %s %s, want %s %s", bi.Main.Path, bi.Main.Version, ModulePath, Version)
	}
	want := map[string]string{"CGO_ENABLED": "0", "GOOS": goos, "GOARCH": goarch}
	for _, s := range bi.Settings {
		if w, ok := want[s.Key]; ok {
			if s.Value != w {
				return fmt.Errorf("it was built with %s=%s, want %s", s.Key, s.Value, w)
			}
			delete(want, s.Key)
		}
	}
	if len(want) > 0 {
		return fmt.Errorf("its build information lacks %v", want)
	}
	return nil
}

// build runs go build in the tools module (GOWORK=off: it is in no
// workspace) into a temporary file renamed to out, so that no reader sees
// half a binary.
func build(ctx context.Context, dir, out, goos, goarch string) error {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("llm-d-inference-sim: no go command to build it (%v): install Go, or set %s to a prebuilt binary (make llmd)", err, EnvBinary)
	}
	tmp := fmt.Sprintf("%s.tmp-%d", out, os.Getpid())
	defer os.Remove(tmp)
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-o", tmp, Package)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOWORK=off")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("llm-d-inference-sim: go build in %s: %w", dir, ctx.Err())
		}
		return fmt.Errorf("llm-d-inference-sim: go build %s in %s: %w (the first build needs the Go module proxy and takes minutes; or set %s to a prebuilt binary: make llmd)\n%s",
			Package, dir, err, EnvBinary, lastLines(log.String(), buildLogLines))
	}
	return os.Rename(tmp, out)
}

// moduleRoot finds the vllmperf checkout from the working directory up:
// the directory whose go.mod declares mainModule.
func moduleRoot() (string, error) {
	start, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := start; ; {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modulePathOf(data) == mainModule {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("llm-d-inference-sim: %s is not inside the %s checkout, where %s is built from: set %s to a prebuilt binary (make llmd in the checkout writes bin/%s)",
				start, mainModule, toolsDir, EnvBinary, binaryName)
		}
		dir = parent
	}
}

// modulePathOf returns the module path a go.mod declares ("" for none).
func modulePathOf(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// elfMachines maps GOARCH to the ELF machine of its binaries.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// checkStaticLinux refuses what cannot be the entrypoint of a FROM
// scratch image on this machine: no Linux ELF executable, a dynamically
// linked one (it needs a loader the image lacks), another architecture.
func checkStaticLinux(bin []byte) error {
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		return fmt.Errorf("not a Linux executable: %w", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("dynamically linked, which a FROM scratch image cannot run: build it with CGO_ENABLED=0 (make llmd)")
		}
	}
	if want, ok := elfMachines[runtime.GOARCH]; ok && f.Machine != want {
		return fmt.Errorf("built for %s, this machine is %s", f.Machine, runtime.GOARCH)
	}
	return nil
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
