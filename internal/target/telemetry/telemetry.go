// Package telemetry watches the GPU while a run measures it: nvidia-smi's
// --query-gpu CSV (SM clock and its maximum, power draw and limit,
// temperature, the clock-event (throttle) reasons, memory used,
// utilization) and --query-compute-apps (the processes on the device), and,
// when VLLMPERF_DCGM_URL points at one, dcgm-exporter's /metrics through
// package scrape. A Recorder samples a Source during a run; Summarize
// says whether the GPU slowed for heat, for its hardware or for a power
// limit set below the board's default, or was shared with another process
// (evidence that makes the run INVALID: package check),
// and gives its average power and energy (the units power-avg-w and
// j/tok).
//
// No telemetry (no GPU, the simulator, nvidia-smi missing) is a Summary
// with Available false: NOT_AVAILABLE, never a pass.
package telemetry

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Sample is one reading of one GPU. A value the source did not give
// (nvidia-smi's [N/A], a metric dcgm-exporter does not export) is NaN.
type Sample struct {
	At time.Time
	// Collected is when the source says it collected the values (an
	// exposition timestamp of dcgm-exporter); zero when it does not say.
	Collected time.Time
	// EnergyMJ is DCGM's total energy counter (NaN when not given): it
	// moves at each of the exporter's collections while the GPU draws
	// power, which shows that its values are new.
	EnergyMJ float64
	// GPU is the device index; UUID its UUID when known.
	GPU, UUID string
	// Instance and Profile name a MIG GPU instance (dcgm-exporter's
	// GPU_I_ID and GPU_I_PROFILE labels) when the sample is one instance
	// of GPU; "" for a whole GPU. Instances of one GPU are kept apart.
	Instance, Profile string
	// SMClockMHz and SMClockMaxMHz: the SM clock and its maximum.
	SMClockMHz, SMClockMaxMHz float64
	// PowerW, PowerLimitW and PowerDefaultLimitW: the board's draw, the
	// power limit set in software (nvidia-smi's power.limit, DCGM's
	// POWER_MGMT_LIMIT) and the board's default limit.
	PowerW, PowerLimitW, PowerDefaultLimitW float64
	// EnforcedLimitW is the limit in force (nvidia-smi's
	// enforced.power.limit, DCGM's ENFORCED_POWER_LIMIT): the lowest of the
	// software limit and any limiter outside the board (the chassis, a
	// data centre's power capping). HasEnforcedLimit says whether it was
	// read; without it (a recording made before the field was asked, an
	// exporter that does not export it) the power rule falls back to
	// PowerLimitW and the evidence says so (LimitInForce).
	EnforcedLimitW   float64
	HasEnforcedLimit bool
	TempC            float64
	// Reasons is the clock-event (throttle) reasons bitmask, NVML's
	// nvmlClocksEventReason* values; HasReasons says whether it was read.
	Reasons    uint64
	HasReasons bool
	MemUsedMiB float64
	UtilPct    float64
}

// Device names s's GPU in evidence: "0", or "0 MIG instance 7 (1g.10gb)".
func (s Sample) Device() string {
	switch {
	case s.Instance == "":
		return s.GPU
	case s.Profile == "":
		return s.GPU + " MIG instance " + s.Instance
	}
	return s.GPU + " MIG instance " + s.Instance + " (" + s.Profile + ")"
}

// Process is one compute process on a GPU (nvidia-smi
// --query-compute-apps).
type Process struct {
	PID     int
	Name    string
	GPUUUID string
	UsedMiB float64
}

// Reading is what one poll of a Source returns.
type Reading struct {
	Samples []Sample
	// Processes are nil when the source cannot list them (dcgm-exporter);
	// ProcessesKnown says whether it could.
	Processes      []Process
	ProcessesKnown bool
	// Cached says the source serves values it collected on its own
	// schedule (dcgm-exporter, every 30 s by default), so a reading may be
	// older than the run: Summarize keeps only samples shown to be new.
	Cached bool
}

// Source reads the GPUs once.
type Source interface {
	// Name names the source in evidence ("nvidia-smi", the dcgm URL).
	Name() string
	Read(ctx context.Context) (Reading, error)
}

// The clock-event reasons (NVML nvmlClocksEventReason*, formerly
// nvmlClocksThrottleReason*; the same bits in DCGM's
// DCGM_FI_DEV_CLOCKS_EVENT_REASONS).
const (
	ReasonGpuIdle           uint64 = 0x1
	ReasonAppClocksSetting  uint64 = 0x2
	ReasonSwPowerCap        uint64 = 0x4
	ReasonHwSlowdown        uint64 = 0x8
	ReasonSyncBoost         uint64 = 0x10
	ReasonSwThermalSlowdown uint64 = 0x20
	ReasonHwThermalSlowdown uint64 = 0x40
	ReasonHwPowerBrake      uint64 = 0x80
)

// slowdowns are the reasons that make a run INVALID: the GPU slowed for
// heat or its hardware, so the figures measure the cooling or the power
// supply, not vLLM; and the SW power cap, but only where the limit in
// force may be below the board's default (Slowdowns).
var slowdowns = []struct {
	bit  uint64
	name string
}{
	{ReasonSwPowerCap, swPowerCap},
	{ReasonHwSlowdown, "HW slowdown"},
	{ReasonSwThermalSlowdown, "SW thermal slowdown"},
	{ReasonHwThermalSlowdown, "HW thermal slowdown"},
	{ReasonHwPowerBrake, "HW power brake"},
}

// swPowerCap is ReasonSwPowerCap's name.
const swPowerCap = "SW power cap"

// ReasonNames names the power, thermal and hardware reasons set in mask.
func ReasonNames(mask uint64) []string {
	var out []string
	for _, r := range slowdowns {
		if mask&r.bit != 0 {
			out = append(out, r.name)
		}
	}
	return out
}

// defaultLimitSlackW is how far under the board's default a power limit
// may read and still be the default (nvidia-smi prints two decimals).
const defaultLimitSlackW = 1

// AtDefaultPowerLimit reports whether the SW power cap held s's clocks
// down at the board's own default power limit (or above it). That is a
// full load's ceiling, the same on every such board at its default
// settings (an H200 under dense bf16 GEMMs sits there in every sample,
// testdata/gpu-h200-at-power-limit.csv), not the runner's doing.
func (s Sample) AtDefaultPowerLimit() bool {
	limit, which := s.LimitInForce()
	switch {
	case s.Reasons&ReasonSwPowerCap == 0 || !s.powerLimitsKnown() || limit < s.PowerDefaultLimitW-defaultLimitSlackW:
		return false
	case which == enforced:
		return true
	}
	// The software limit at the default says nothing of a limiter outside
	// the board; the draw does: a board drawing its default limit had no
	// lower one in force.
	return s.drawAtDefault()
}

// drawAtDefaultShare is how close to the board's default limit the draw
// must be, under the SW power cap, to show that no lower limit was in
// force when the enforced limit was not read: an H200 held at its 700 W
// cap drew 691 W (testdata/gpu-h200-at-power-limit.csv).
const drawAtDefaultShare = 0.95

// drawAtDefault reports whether s drew the board's default limit.
func (s Sample) drawAtDefault() bool {
	return !math.IsNaN(s.PowerW) && s.PowerW >= drawAtDefaultShare*s.PowerDefaultLimitW
}

// enforced is LimitInForce's name of the enforced limit.
const enforced = "enforced"

// LimitInForce is the power limit the power rule judges: the enforced
// limit when it was read, else the software limit (power.limit), which
// misses a limiter outside the board; which says which ("enforced" or
// "power.limit"). NaN when neither was given.
func (s Sample) LimitInForce() (watts float64, which string) {
	if s.HasEnforcedLimit && !math.IsNaN(s.EnforcedLimitW) {
		return s.EnforcedLimitW, enforced
	}
	return s.PowerLimitW, "power.limit"
}

func (s Sample) powerLimitsKnown() bool {
	limit, _ := s.LimitInForce()
	return !math.IsNaN(limit) && !math.IsNaN(s.PowerDefaultLimitW)
}

// Slowdowns names the reasons of s that make a run INVALID: every thermal
// and hardware slowdown, and the SW power cap unless it is at the board's
// default limit (AtDefaultPowerLimit). Where the source gives no limit or
// no default, a lowered limit cannot be ruled out, and the name says so.
func Slowdowns(s Sample) []string {
	var out []string
	for _, name := range ReasonNames(s.Reasons) {
		if name == swPowerCap {
			limit, _ := s.LimitInForce()
			switch {
			case s.AtDefaultPowerLimit():
				continue
			case s.powerLimitsKnown() && limit < s.PowerDefaultLimitW-defaultLimitSlackW:
				name += " below the board's default power limit"
			case s.powerLimitsKnown():
				name += " with the draw under the board's default limit and the enforced limit not read (a limiter outside the board cannot be ruled out: read nvidia-smi's " + EnforcedLimitField + " or dcgm-exporter's " + dcgmEnforced + ")"
			default:
				name += " (the power limit or the board's default unknown: a lowered limit cannot be ruled out)"
			}
		}
		out = append(out, name)
	}
	return out
}

// parseFloat reads a number, NaN for nvidia-smi's "[N/A]", "[Not
// Supported]" and the like.
func parseFloat(field string) (float64, error) {
	s := strings.TrimSpace(field)
	if s == "" || strings.HasPrefix(s, "[") || s == "N/A" {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return v, nil
}
