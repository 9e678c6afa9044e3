package server

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"

	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
)

// TestTraceFolderInContainers: with WithTorchProfiler a vLLM container and
// the simulator's get the host folder mounted at /vllm-traces and
// VLLM_TORCH_PROFILER_DIR naming it; without it, neither.
func TestTraceFolderInContainers(t *testing.T) {
	t.Parallel()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts []Option
		want bool
	}{
		{"vllm image", []Option{WithBackend(KindContainer), WithTorchProfiler("/host/traces")}, true},
		{"sim image", []Option{WithBackend(KindContainer), WithImage(SimImage), WithTorchProfiler("/host/traces")}, true},
		{"off", []Option{WithBackend(KindContainer)}, false},
	} {
		s := defaultSettings()
		s.hfCache = t.TempDir()
		for _, o := range tc.opts {
			o(&s)
		}
		r, err := buildRequest(s, p)
		if err != nil {
			t.Fatal(err)
		}
		var hc container.HostConfig
		r.modifyHostConfig(&hc)
		mounted := slices.Contains(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: "/host/traces", Target: containerTraceDir})
		env, set := r.env[envProfilerDir]
		if mounted != tc.want || set != tc.want || (set && string(env) != containerTraceDir) {
			t.Errorf("%s: mounted %v, %s=%q (set %v); want both %v", tc.name, mounted, envProfilerDir, env, set, tc.want)
		}
	}
}

// TestSimBackendTorchProfiler: the in-process simulator started with
// WithTorchProfiler serves the profiler and writes its trace there.
func TestSimBackendTorchProfiler(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Run(ctx, p, WithTorchProfiler(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := srv.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	c := torchprof.New(srv.BaseURL(), "")
	if err := c.Check(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	files, err := torchprof.Traces(dir, time.Time{})
	if err != nil || len(files) != 1 {
		t.Fatalf("traces in %s: %v, %v; want one", dir, files, err)
	}
	if n, err := torchprof.Events(files[0]); err != nil || n == 0 {
		t.Errorf("%s: %d events, %v", files[0], n, err)
	}
}
