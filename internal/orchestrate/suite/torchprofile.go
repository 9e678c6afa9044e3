package suite

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// The suite's profiler settings (vllmperf run's --torch-profile for the
// suite's points).
var (
	// EnvTorchProfile names the points to profile: comma-separated
	// path.Match globs over profile=P/scenario=S/KEY, e.g.
	// "profile=basic/scenario=concurrency-sweep/conc=32".
	EnvTorchProfile = envvar.TorchProfile.Name
	// EnvTorchProfileDir is the traces' folder: where the servers the
	// suite starts write them (default: traces/ in the results folder,
	// else vllm-traces); for the external backend, the deployment's own
	// trace folder as this machine sees it (unset: the traces stay there).
	EnvTorchProfileDir = envvar.TorchProfileDir.Name
)

// torchProfileFromEnv reads VLLMPERF_TORCH_PROFILE and its folder into c.
func (c *Config) torchProfileFromEnv() error {
	v := strings.TrimSpace(os.Getenv(EnvTorchProfile))
	if v == "" {
		if d := os.Getenv(EnvTorchProfileDir); d != "" {
			return fmt.Errorf("%s=%s sets up %s: name the points to profile there, or unset it", EnvTorchProfileDir, d, EnvTorchProfile)
		}
		return nil
	}
	for _, g := range strings.Split(v, ",") {
		g = strings.TrimSpace(g)
		if _, err := path.Match(g, ""); err != nil || g == "" {
			return fmt.Errorf("%s=%s: %q is not a point pattern (want globs such as profile=basic/scenario=concurrency-sweep/conc=32, comma-separated)", EnvTorchProfile, v, g)
		}
		c.TorchProfile = append(c.TorchProfile, g)
	}
	c.TraceDir = strings.TrimSpace(os.Getenv(EnvTorchProfileDir))
	return nil
}

// setupTraces turns on the profiler of the servers the suite starts when
// points are to be profiled, their traces in the trace folder.
func (s *Suite) setupTraces() error {
	if len(s.cfg.TorchProfile) == 0 {
		return nil
	}
	if s.cfg.Backend == server.KindExternal {
		return nil // the deployment's profiler is its own; TraceDir names its folder
	}
	dir := s.cfg.TraceDir
	switch {
	case dir != "":
	case s.out != nil:
		dir = filepath.Join(s.out.Dir(), "traces")
	default:
		dir = pipeline.DefaultTraceDir
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		err = os.MkdirAll(abs, 0o755)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", EnvTorchProfileDir, err)
	}
	s.cfg.TraceDir = abs
	s.cfg.Server = append(s.cfg.Server, server.WithTorchProfiler(abs))
	return nil
}

// traceOptions profile point p of scenarioName when a pattern selects it.
func (ss *Session) traceOptions(p scenario.Point, scenarioName string) []pipeline.Option {
	name := benchname.Name{Profile: ss.Profile.Name, Scenario: scenarioName, Point: p.Key}.String()
	for _, g := range ss.suite.cfg.TorchProfile {
		if ok, _ := path.Match(g, name); ok {
			return []pipeline.Option{pipeline.WithTorchProfile(torchprof.Settings{Dir: ss.suite.cfg.TraceDir})}
		}
	}
	return nil
}
