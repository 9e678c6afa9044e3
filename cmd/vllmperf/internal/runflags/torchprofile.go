package runflags

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/vllmperf/vllmperf/internal/run/pipeline"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/target/torchprof"
)

// TorchProfileFlags are --torch-profile and its settings.
type TorchProfileFlags struct {
	On      bool
	Dir     string
	Window  time.Duration
	Running int
}

// torchProfileFlagNames are the flags that mean nothing without
// --torch-profile.
var torchProfileFlagNames = []string{"torch-profile-dir", "torch-profile-window", "torch-profile-running"}

// Register defines the flags on f.
func (t *TorchProfileFlags) Register(f *pflag.FlagSet) {
	f.BoolVar(&t.On, "torch-profile", false, "run vLLM's torch profiler (/start_profile, /stop_profile) over a steady window of the load and collect its traces; the server must have its profiler on (vllmperf turns it on for the servers it starts)")
	f.StringVar(&t.Dir, "torch-profile-dir", "", "the traces' folder: where the servers vllmperf starts write them (default "+pipeline.DefaultTraceDir+"); with --target, the server's own trace folder as this machine sees it (without it the traces stay where the server writes them)")
	f.DurationVar(&t.Window, "torch-profile-window", torchprof.DefaultWindow, "how long the profiler runs (it stops earlier when the load ends)")
	f.IntVar(&t.Running, "torch-profile-running", 0, "start the profiler once this many requests are running (default: 80% of --concurrency, 1 for a rate)")
}

// settings checks the flags and returns the capture's settings (nil when
// --torch-profile is off) and the server option that turns the profiler
// on where vllmperf starts the server (external: none).
func (t *TorchProfileFlags) settings(fs *pflag.FlagSet, external bool) (*torchprof.Settings, []server.Option, error) {
	if !t.On {
		for _, name := range torchProfileFlagNames {
			if fs.Changed(name) {
				return nil, nil, fmt.Errorf("--%s sets up --torch-profile: add --torch-profile, or drop --%s", name, name)
			}
		}
		return nil, nil, nil
	}
	if t.Window <= 0 {
		return nil, nil, fmt.Errorf("--torch-profile-window %s: want a positive duration such as 3s", t.Window)
	}
	if t.Running < 0 {
		return nil, nil, fmt.Errorf("--torch-profile-running %d: want a number of requests, or 0 for 80%% of --concurrency", t.Running)
	}
	s := &torchprof.Settings{Window: t.Window, Running: t.Running, Dir: t.Dir}
	if external {
		if s.Dir != "" {
			if info, err := os.Stat(s.Dir); err != nil || !info.IsDir() {
				return nil, nil, fmt.Errorf("--torch-profile-dir %s: not a folder here (%v): name the server's trace folder as this machine sees it, or drop the flag to leave the traces on the server", s.Dir, err)
			}
		}
		return s, nil, nil
	}
	if s.Dir == "" {
		s.Dir = pipeline.DefaultTraceDir
	}
	abs, err := filepath.Abs(s.Dir)
	if err == nil {
		err = os.MkdirAll(abs, 0o755)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("--torch-profile-dir %s: %w", s.Dir, err)
	}
	s.Dir = abs
	return s, []server.Option{server.WithTorchProfiler(abs)}, nil
}
