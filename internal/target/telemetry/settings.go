package telemetry

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// EnvTelemetry selects when runs are watched: auto (default: the
// container backend on this machine's GPUs), on (always with nvidia-smi,
// e.g. a fake one in tests or the simulator on a GPU machine), or off.
var EnvTelemetry = envvar.Telemetry.Name

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
	// GPUs are the devices the server uses (VLLMPERF_GPUS: indices or
	// UUIDs); empty for all. Other GPUs, and the processes on them, are
	// another server's business (one server per GPU set).
	GPUs []string
}

// envGPUs is package server's VLLMPERF_GPUS: all, none, or devices.
var envGPUs = envvar.GPUs.Name

// SettingsFromEnv reads VLLMPERF_TELEMETRY (its default, auto, when
// unset), VLLMPERF_DCGM_URL and VLLMPERF_GPUS through package envvar.
func SettingsFromEnv() (Settings, error) {
	s := Settings{Mode: envvar.Telemetry.Get(), DCGMURL: envvar.DCGMURL.Get()}
	switch g := envvar.GPUs.Get(); g {
	case "", "all", "none":
	default:
		for _, d := range strings.Split(g, ",") {
			s.GPUs = append(s.GPUs, strings.TrimSpace(d))
		}
	}
	switch s.Mode {
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
		srcs = append(srcs, Only(smi, s.GPUs))
	}
	if s.DCGMURL != "" {
		srcs = append(srcs, Only(NewDCGM(s.DCGMURL), s.GPUs))
	}
	return srcs, required
}

// Only restricts a source to the GPUs named (index or UUID) and the
// processes on them; all of them when gpus is empty.
func Only(src Source, gpus []string) Source {
	if len(gpus) == 0 {
		return src
	}
	return only{src, gpus}
}

type only struct {
	Source
	gpus []string
}

func (o only) Read(ctx context.Context) (Reading, error) {
	rd, err := o.Source.Read(ctx)
	if err != nil {
		return rd, err
	}
	keep := map[string]bool{}
	var samples []Sample
	for _, s := range rd.Samples {
		if slices.Contains(o.gpus, s.GPU) || slices.Contains(o.gpus, s.UUID) {
			samples = append(samples, s)
			keep[s.UUID] = true
		}
	}
	var procs []Process
	for _, p := range rd.Processes {
		if keep[p.GPUUUID] {
			procs = append(procs, p)
		}
	}
	rd.Samples, rd.Processes = samples, procs
	return rd, nil
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
