package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// torchLoad is a load long enough for a profiler window: 4 streams of
// 48-token answers, 8 requests (about a second on the default preset).
var torchLoad = []string{"--quiet", "--concurrency", "4", "--requests", "8", "--max-tokens", "48", "--prompt-tokens", "64", "--warmup", "0"}

// checkTraces asserts that dir holds at least one trace with events.
func checkTraces(t *testing.T, dir, stderr string) {
	t.Helper()
	files, err := torchprof.Traces(dir, time.Time{})
	if err != nil || len(files) == 0 {
		t.Fatalf("no trace in %s (%v)\nstderr:\n%s", dir, err, stderr)
	}
	for _, f := range files {
		if n, err := torchprof.Events(f); err != nil || n == 0 {
			t.Errorf("%s: %d events, %v", f, n, err)
		}
	}
	if !strings.Contains(stderr, "trace events in "+dir) {
		t.Errorf("stderr does not name the traces:\n%s", stderr)
	}
}

// TestRunTorchProfile: --torch-profile on the embedded simulator (which
// vllmperf starts with its profiler on) and on a simulator reached by
// --target that was started with a trace folder leaves Chrome traces
// there; a target started without a profiler is refused before the load
// with how to turn vLLM's profiler on.
func TestRunTorchProfile(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		dir := t.TempDir()
		var out, errOut limitedBuffer
		args := append([]string{"run", "--torch-profile", "--torch-profile-dir", dir, "--torch-profile-window", "300ms"}, torchLoad...)
		if err := run(context.Background(), &out, &errOut, args); err != nil {
			t.Fatalf("vllmperf %v: %v\n%s", args, err, errOut.String())
		}
		checkTraces(t, dir, errOut.String())
	})
	t.Run("target with a trace folder", func(t *testing.T) {
		dir := t.TempDir()
		base := startSim(t, "--profiler-config", `{"profiler":"torch","torch_profiler_dir":"`+dir+`"}`)
		var out, errOut limitedBuffer
		args := append([]string{"run", "--target", base, "--torch-profile", "--torch-profile-dir", dir, "--torch-profile-window", "300ms"}, torchLoad...)
		if err := run(context.Background(), &out, &errOut, args); err != nil {
			t.Fatalf("vllmperf %v: %v\n%s", args, err, errOut.String())
		}
		checkTraces(t, dir, errOut.String())
	})
	t.Run("target without a profiler", func(t *testing.T) {
		base := startSim(t)
		var out, errOut limitedBuffer
		err := run(context.Background(), &out, &errOut, append([]string{"run", "--target", base, "--torch-profile"}, torchLoad...))
		if err == nil || !strings.Contains(err.Error(), "VLLM_TORCH_PROFILER_DIR") || !strings.Contains(err.Error(), "--profiler-config") {
			t.Fatalf("err = %v, want the 404 explained with how to turn vLLM's profiler on", err)
		}
		if strings.Contains(out.String(), "Successful requests") {
			t.Errorf("the load ran although the profiler was off:\n%s", out.String())
		}
	})
}

// TestRunTorchProfileInSimContainer: the container backend mounts the
// trace folder into the simulator's image and names it to the server
// (VLLM_TORCH_PROFILER_DIR), so the traces land here.
func TestRunTorchProfileInSimContainer(t *testing.T) {
	if err := server.DockerAvailable(context.Background()); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Docker is required in CI: %v", err)
		}
		t.Skipf("no Docker engine (%v): skipping the container path; install docker.io and start dockerd to run it", err)
	}
	dir := t.TempDir()
	var out, errOut limitedBuffer
	args := append([]string{"run", "--image", "sim", "--torch-profile", "--torch-profile-dir", dir, "--torch-profile-window", "300ms"}, torchLoad...)
	if err := run(context.Background(), &out, &errOut, args); err != nil {
		t.Fatalf("vllmperf %v: %v\n%s", args, err, errOut.String())
	}
	checkTraces(t, dir, errOut.String())
}

// TestRunTorchProfileRejectsBadInput: the profiler's flags are checked
// before anything starts (exit 2), each error naming the flag.
func TestRunTorchProfileRejectsBadInput(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// a setting of the profiler without the profiler
		{"window alone", []string{"--torch-profile-window", "2s"}, "add --torch-profile"},
		// a window of no time
		{"zero window", []string{"--torch-profile", "--torch-profile-window", "0s"}, "--torch-profile-window 0s"},
		// a negative running target
		{"negative running", []string{"--torch-profile", "--torch-profile-running", "-1"}, "--torch-profile-running -1"},
		// a target's trace folder that does not exist here
		{"missing folder", []string{"--torch-profile", "--target", "http://127.0.0.1:1", "--torch-profile-dir", "/nonexistent/traces"}, "not a folder here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut limitedBuffer
			err := run(context.Background(), &out, &errOut, append([]string{"run", "--quiet", "--concurrency", "1", "--requests", "1"}, tc.args...))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
			if got := exitCode(err, &errOut); got != 2 {
				t.Errorf("exit code = %d, want 2", got)
			}
		})
	}
}
