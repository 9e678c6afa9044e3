package telemetry

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// EnvTelemetry selects when runs are watched: auto (default: the
// container backend on this machine's GPUs), on (always with nvidia-smi,
// e.g. a fake one in tests or the simulator on a GPU machine), or off.
const EnvTelemetry = "VLLMPERF_TELEMETRY"

// The modes of EnvTelemetry.
const (
	ModeAuto = "auto"
	ModeOn   = "on"
	ModeOff  = "off"
)

// Settings say which sources watch a run.
type Settings struct {
	Mode    string
	DCGMURL string
}

// SettingsFromEnv reads VLLMPERF_TELEMETRY and VLLMPERF_DCGM_URL.
func SettingsFromEnv() (Settings, error) {
	s := Settings{Mode: strings.TrimSpace(os.Getenv(EnvTelemetry)), DCGMURL: strings.TrimSpace(os.Getenv(EnvDCGMURL))}
	switch s.Mode {
	case "":
		s.Mode = ModeAuto
	case ModeAuto, ModeOn, ModeOff:
	default:
		return s, fmt.Errorf("%s=%q: want auto, on or off", EnvTelemetry, s.Mode)
	}
	return s, nil
}

// Sources are the sources for a server; localGPU says it runs on this
// machine's GPUs. required says missing telemetry must count (a GPU run
// that nobody watched is not a sound measurement).
func (s Settings) Sources(localGPU bool) (srcs []Source, required bool) {
	if s.Mode == ModeOff {
		return nil, false
	}
	required = s.Mode == ModeOn || localGPU
	if smi := (&NvidiaSMI{}); required && smi.Available() {
		srcs = append(srcs, smi)
	}
	if s.DCGMURL != "" {
		srcs = append(srcs, NewDCGM(s.DCGMURL))
	}
	return srcs, required
}

// PIDs returns the compute processes the sources see now (nil when none
// lists processes).
func PIDs(ctx context.Context, srcs []Source) map[int]bool {
	var out map[int]bool
	for _, s := range srcs {
		rd, err := s.Read(ctx)
		if err != nil || !rd.ProcessesKnown {
			continue
		}
		if out == nil {
			out = map[int]bool{}
		}
		for _, p := range rd.Processes {
			out[p.PID] = true
		}
	}
	return out
}

// Own are the server's processes: those in after (seen once it was
// ready) that were not in before (seen before it started).
func Own(before, after map[int]bool) map[int]bool {
	own := map[int]bool{}
	for pid := range after {
		if !before[pid] {
			own[pid] = true
		}
	}
	return own
}
