package telemetry

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Summary is what the recordings of one run say about its GPUs.
type Summary struct {
	// Available is false when no source gave a sample; Why says why.
	Available bool
	Why       string
	// Unread names, when others gave samples, the sources that gave none
	// and why (a dcgm-exporter whose values predate the run).
	Unread []string
	// Sources name the sources that gave samples; Samples counts them
	// (one per GPU per read).
	Sources []string
	Samples int
	// WithReasons counts the samples that carried the clock-event
	// (throttle) reasons: with none, no slowdown could have been seen, and
	// the throttle check is NOT_AVAILABLE, never a pass.
	WithReasons int
	// Throttled is the evidence of a slowdown that makes the run INVALID
	// (Slowdowns), one line per GPU and reason; empty when none.
	Throttled []string
	// AtPowerLimit is the evidence of the SW power cap at the board's
	// default limit (Sample.AtDefaultPowerLimit): a full load's own
	// ceiling, reported but not INVALID. One line per GPU.
	AtPowerLimit []string
	// ProcessesKnown says whether a source listed the compute processes;
	// Foreign names those that were not the server's.
	ProcessesKnown bool
	Foreign        []string
	// Own counts the server's own processes seen on the GPUs: a listing
	// without them (a container without the host's PID namespace sees no
	// process at all) cannot show another one either.
	Own int
	// ServerOnGPU says the server runs on the watched GPUs, so that its
	// processes should be listed (a vLLM container); false for the
	// simulator, which has none there. Set by the caller.
	ServerOnGPU bool
	// PowerW is the average total draw of the GPUs (the first source
	// that reports power); EnergyJ that power over the run's duration.
	// Both NaN when no source reports power.
	PowerW, EnergyJ float64
}

// Summarize reads the recordings of a run. own holds the PIDs of the
// server's processes (those that appeared while it started); any other
// compute process seen is foreign.
func Summarize(recs []Recording, own map[int]bool) Summary {
	s := Summary{PowerW: math.NaN(), EnergyJ: math.NaN()}
	var why []string
	for _, rec := range recs {
		stale := ""
		if rec.Cached {
			rec.Samples, stale = fresh(rec)
		}
		if len(rec.Samples) == 0 {
			reason := "no sample"
			switch {
			case stale != "":
				reason = stale
			case len(rec.Errors) > 0:
				reason = rec.Errors[0]
			}
			why = append(why, rec.Source+": "+reason)
			continue
		}
		s.Available = true
		s.Sources = append(s.Sources, rec.Source)
		s.Samples += len(rec.Samples)
		for _, smp := range rec.Samples {
			if smp.HasReasons {
				s.WithReasons++
			}
		}
		s.Throttled = append(s.Throttled, evidence(rec, Slowdowns)...)
		s.AtPowerLimit = append(s.AtPowerLimit, evidence(rec, atDefaultLimit)...)
		if rec.ProcessesKnown {
			s.ProcessesKnown = true
			s.Foreign = append(s.Foreign, foreign(rec, own)...)
			for _, p := range rec.Processes {
				if own[p.PID] {
					s.Own++
				}
			}
		}
		if math.IsNaN(s.PowerW) {
			if w, ok := averagePower(rec.Samples); ok {
				s.PowerW = w
				s.EnergyJ = w * rec.End.Sub(rec.Start).Seconds()
			}
		}
	}
	if len(recs) == 0 {
		why = append(why, "no GPU telemetry source (nvidia-smi not found, "+EnvDCGMURL+" unset)")
	}
	if !s.Available {
		s.Why = strings.Join(why, "; ")
	} else {
		s.Unread = why
	}
	return s
}

// atDefaultLimit names the SW power cap at the board's default limit.
func atDefaultLimit(s Sample) []string {
	if s.AtDefaultPowerLimit() {
		return []string{"SW power cap at the board's default power limit"}
	}
	return nil
}

// evidence lists, per GPU and reason that names gives a sample, in how
// many samples it was active, with the clock, power and temperature of the
// sample where the clock was lowest.
func evidence(rec Recording, names func(Sample) []string) []string {
	type key struct{ gpu, reason string }
	count, total := map[key]int{}, map[string]int{}
	worst := map[key]Sample{}
	for _, smp := range rec.Samples {
		total[smp.Device()]++
		for _, name := range names(smp) {
			k := key{smp.Device(), name}
			count[k]++
			if w, ok := worst[k]; !ok || smp.SMClockMHz < w.SMClockMHz {
				worst[k] = smp
			}
		}
	}
	var out []string
	for k, n := range count {
		w := worst[k]
		limit, which := w.LimitInForce()
		note := ""
		if which != enforced {
			note = " (" + which + ": the enforced limit was not read)"
		}
		out = append(out, fmt.Sprintf("GPU %s: %s in %d of %d samples (%s; SM clock %s of %s MHz, %s of %s W, default %s W%s, %s °C)",
			k.gpu, k.reason, n, total[k.gpu], rec.Source, num(w.SMClockMHz), num(w.SMClockMaxMHz), num(w.PowerW), num(limit), num(w.PowerDefaultLimitW), note, num(w.TempC)))
	}
	sort.Strings(out)
	return out
}

// foreign lists the processes of rec that are not in own.
func foreign(rec Recording, own map[int]bool) []string {
	var out []string
	for _, p := range rec.Processes {
		if !own[p.PID] {
			out = append(out, fmt.Sprintf("pid %d %s using %s MiB on %s", p.PID, p.Name, num(p.UsedMiB), p.GPUUUID))
		}
	}
	return out
}

// averagePower is the mean over the reads of the GPUs' summed draw. The
// MIG instances of one GPU report the GPU's draw each: it is counted once.
func averagePower(samples []Sample) (float64, bool) {
	byRead := map[int64]float64{}
	type device struct {
		at  int64
		gpu string
	}
	counted := map[device]bool{}
	for _, s := range samples {
		if math.IsNaN(s.PowerW) {
			return 0, false
		}
		d := device{s.At.UnixNano(), s.GPU}
		if s.Instance != "" && counted[d] {
			continue
		}
		counted[d] = true
		byRead[s.At.UnixNano()] += s.PowerW
	}
	if len(byRead) == 0 {
		return 0, false
	}
	// A running mean in read order: the same every time, and exactly the
	// reading when every read says the same (a sum divided by the count
	// is off in the last digit for some counts).
	reads := slices.Sorted(maps.Keys(byRead))
	mean := 0.0
	for i, at := range reads {
		mean += (byRead[at] - mean) / float64(i+1)
	}
	return mean, true
}

// Metrics are the run's power units: average watts and joules per output
// token (none without power; no j/tok without output tokens).
func (s Summary) Metrics(outputTokens int) map[string]float64 {
	m := map[string]float64{}
	if math.IsNaN(s.PowerW) {
		return m
	}
	m[units.PowerAvgW] = s.PowerW
	if outputTokens > 0 {
		m[units.JoulesPerToken] = s.EnergyJ / float64(outputTokens)
	}
	return m
}

// num writes a reading, "?" for one the source did not give.
func num(v float64) string {
	if math.IsNaN(v) {
		return "?"
	}
	return fmt.Sprintf("%.0f", v)
}
