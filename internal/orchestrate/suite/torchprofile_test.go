package suite_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/server"
)

// TestTorchProfilePoints: VLLMPERF_TORCH_PROFILE names the points run
// under vLLM's profiler; the suite's servers write their traces to
// VLLMPERF_TORCH_PROFILE_DIR, and the other points run without it.
func TestTorchProfilePoints(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(suite.EnvTorchProfile, "profile=basic/scenario=concurrency-sweep/conc=2")
	t.Setenv(suite.EnvTorchProfileDir, dir)
	cfg, err := suite.FromEnv(true)
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.New(suite.Config{Server: []server.Option{server.WithBackend(server.KindSim)}, Size: scenario.Quick,
		TorchProfile: cfg.TorchProfile, TraceDir: cfg.TraceDir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ss, err := s.Start(ctx, "basic")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ss.Close(context.WithoutCancel(ctx)); err != nil {
			t.Error(err)
		}
	}()
	points, err := ss.Points("concurrency-sweep")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range points {
		if c := p.Load.Concurrency; c != 1 && c != 2 {
			continue
		}
		r, err := ss.Run(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		tp := r.Result.TorchProfile
		switch p.Load.Concurrency {
		case 1:
			if tp != nil {
				t.Errorf("%s was profiled: %s", r.Name, tp.Summary())
			}
		case 2:
			if tp == nil || tp.Err != nil || tp.Events == 0 || !strings.HasPrefix(tp.Files[0], dir) {
				t.Errorf("%s: capture %+v, want traces in %s", r.Name, tp, dir)
			}
		}
	}
}

func TestTorchProfileEnvErrors(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		// a malformed glob
		{map[string]string{suite.EnvTorchProfile: "profile=[basic"}, "is not a point pattern"},
		// a folder without points
		{map[string]string{suite.EnvTorchProfileDir: "/tmp/traces"}, "name the points to profile"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if _, err := suite.FromEnv(true); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("FromEnv: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
