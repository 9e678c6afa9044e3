package telemetry

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// EnvDCGMURL names dcgm-exporter's /metrics URL (e.g.
// http://127.0.0.1:9400/metrics): read besides nvidia-smi when set.
var EnvDCGMURL = envvar.DCGMURL.Name

// dcgm-exporter's field names (its default-counters.csv; DCGM's
// dcgm_fields.h). The reasons field was renamed with DCGM 3.3.
const (
	dcgmSMClock      = "DCGM_FI_DEV_SM_CLOCK"
	dcgmMaxSMClock   = "DCGM_FI_DEV_MAX_SM_CLOCK"
	dcgmPower        = "DCGM_FI_DEV_POWER_USAGE"
	dcgmPowerLimit   = "DCGM_FI_DEV_POWER_MGMT_LIMIT"
	dcgmPowerDefault = "DCGM_FI_DEV_POWER_MGMT_LIMIT_DEF"
	dcgmEnforced     = "DCGM_FI_DEV_ENFORCED_POWER_LIMIT"
	dcgmTemp         = "DCGM_FI_DEV_GPU_TEMP"
	dcgmReasons      = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
	dcgmReasonsOld   = "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"
	dcgmFBUsed       = "DCGM_FI_DEV_FB_USED"
	dcgmUtil         = "DCGM_FI_DEV_GPU_UTIL"
	dcgmEnergy       = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"
	dcgmGPULabel     = "gpu"
	dcgmInstance     = "GPU_I_ID"
	dcgmProfile      = "GPU_I_PROFILE"
	dcgmUUIDLabel    = "UUID"
	dcgmFallbackUUID = "uuid"
)

// ReasonsAdvice says how to make the clock-event reasons readable: the
// field is not in dcgm-exporter's default counters (docs/gpu-runners.md).
const ReasonsAdvice = "dcgm-exporter's default counters leave the field out: add the line `" + dcgmReasons + ", gauge, Current clock event reasons.` to its counters CSV (-f, --collectors) and restart it (`" + dcgmReasonsOld + "` before DCGM 3.3); nvidia-smi gives `" + ReasonsField + "` (`" + LegacyReasons + "` before driver R535)"

// DCGM reads dcgm-exporter's /metrics through package scrape.
type DCGM struct {
	scraper *scrape.Scraper
}

// NewDCGM reads the exporter at url.
func NewDCGM(url string) *DCGM {
	return &DCGM{scraper: scrape.NewScraper(url, scrape.WithTimeout(5*time.Second))}
}

// Name is the exporter's URL.
func (d *DCGM) Name() string { return "dcgm-exporter " + d.scraper.URL() }

// Read scrapes the exporter once. dcgm-exporter lists no processes.
func (d *DCGM) Read(ctx context.Context) (Reading, error) {
	fams, err := d.scraper.Gauges(ctx)
	if err != nil {
		return Reading{}, err
	}
	samples, err := FromDCGM(fams)
	if err != nil {
		return Reading{}, err
	}
	return Reading{Samples: samples, Cached: true}, nil
}

// FromDCGM turns a dcgm-exporter exposition into one Sample per GPU (its
// gpu label), and per MIG instance (GPU_I_ID) on a GPU in MIG mode: the
// instances are kept apart, never one overwriting another. An exposition without DCGM_FI_DEV_SM_CLOCK or
// DCGM_FI_DEV_POWER_USAGE is not dcgm-exporter's: an error naming them.
func FromDCGM(f *scrape.Families) ([]Sample, error) {
	if f.Series[dcgmSMClock] == nil && f.Series[dcgmPower] == nil {
		return nil, fmt.Errorf("%s: neither %s nor %s: not a dcgm-exporter /metrics page (or its counters CSV leaves them out)", f.Source, dcgmSMClock, dcgmPower)
	}
	byGPU := map[string]*Sample{}
	get := func(labels map[string]string) *Sample {
		gpu, inst := labels[dcgmGPULabel], labels[dcgmInstance]
		s, ok := byGPU[gpu+"\x00"+inst]
		if !ok {
			nan := math.NaN()
			s = &Sample{At: f.ScrapedAt, GPU: gpu, Instance: inst, Profile: labels[dcgmProfile], SMClockMHz: nan, SMClockMaxMHz: nan, PowerW: nan, PowerLimitW: nan, PowerDefaultLimitW: nan, TempC: nan, MemUsedMiB: nan, UtilPct: nan, EnergyMJ: nan}
			byGPU[gpu+"\x00"+inst] = s
		}
		if u := labels[dcgmUUIDLabel]; u != "" {
			s.UUID = u
		} else if u := labels[dcgmFallbackUUID]; u != "" {
			s.UUID = u
		}
		return s
	}
	fields := map[string]func(*Sample, float64){
		dcgmSMClock:      func(s *Sample, v float64) { s.SMClockMHz = v },
		dcgmMaxSMClock:   func(s *Sample, v float64) { s.SMClockMaxMHz = v },
		dcgmPower:        func(s *Sample, v float64) { s.PowerW = v },
		dcgmPowerLimit:   func(s *Sample, v float64) { s.PowerLimitW = v },
		dcgmPowerDefault: func(s *Sample, v float64) { s.PowerDefaultLimitW = v },
		dcgmEnforced:     func(s *Sample, v float64) { s.EnforcedLimitW, s.HasEnforcedLimit = v, true },
		dcgmTemp:         func(s *Sample, v float64) { s.TempC = v },
		dcgmFBUsed:       func(s *Sample, v float64) { s.MemUsedMiB = v },
		dcgmUtil:         func(s *Sample, v float64) { s.UtilPct = v },
		dcgmEnergy:       func(s *Sample, v float64) { s.EnergyMJ = v },
		dcgmReasons:      func(s *Sample, v float64) { s.Reasons, s.HasReasons = uint64(v), true },
		dcgmReasonsOld:   func(s *Sample, v float64) { s.Reasons, s.HasReasons = uint64(v), true },
	}
	for name, set := range fields {
		for _, series := range f.Series[name] {
			s := get(series.Labels)
			set(s, series.Value)
			if !series.At.IsZero() && (s.Collected.IsZero() || series.At.Before(s.Collected)) {
				s.Collected = series.At // the oldest of its values
			}
		}
	}
	out := make([]Sample, 0, len(byGPU))
	for _, s := range byGPU {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GPU != out[j].GPU {
			return out[i].GPU < out[j].GPU
		}
		return out[i].Instance < out[j].Instance
	})
	return out, nil
}
