package telemetry

import (
	"fmt"
	"math"
	"time"
)

// StaleAdvice says how to make dcgm-exporter's values fresh enough for a
// run: it collects every 30 s by default.
const StaleAdvice = "dcgm-exporter collects every 30000 ms by default (-c, --collect-interval): run it with -c 1000 so that its values describe the run"

// fresh returns the samples of a cached source's recording (dcgm-exporter)
// that are shown to describe the run, and, when none is, why. A sample
// with the exporter's own timestamp is fresh when it was collected after
// the recording started. Without timestamps the values themselves must
// show it: a device's samples count from the first read whose values
// differ from the read before (the exporter collected during the run);
// the reads before it may be older than the run, and a device whose
// values never changed is not shown to have been read during the run at
// all.
func fresh(rec Recording) ([]Sample, string) {
	var out []Sample
	prev := map[string]Sample{}
	changed := map[string]bool{}
	var newest time.Time
	stamped, reads := 0, 0
	for _, s := range rec.Samples {
		if !s.Collected.IsZero() {
			stamped++
			if s.Collected.After(newest) {
				newest = s.Collected
			}
			if !s.Collected.Before(rec.Start) {
				out = append(out, s)
			}
			continue
		}
		reads++
		d := s.Device()
		if p, ok := prev[d]; ok && !changed[d] && !sameValues(p, s) {
			changed[d] = true
		}
		prev[d] = s
		if changed[d] {
			out = append(out, s)
		}
	}
	if len(out) > 0 {
		return out, ""
	}
	if stamped > 0 {
		return nil, fmt.Sprintf("every value is older than the run (the newest collected at %s, the run started at %s): %s",
			newest.UTC().Format(time.RFC3339Nano), rec.Start.UTC().Format(time.RFC3339Nano), StaleAdvice)
	}
	return nil, fmt.Sprintf("the values did not change in %d reads over %s, so none is shown to be from the run (they may be older than it): %s",
		reads, rec.End.Sub(rec.Start).Round(time.Millisecond), StaleAdvice)
}

// sameValues reports whether two samples of one device read the same.
func sameValues(a, b Sample) bool {
	eq := func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) }
	return eq(a.SMClockMHz, b.SMClockMHz) && eq(a.PowerW, b.PowerW) && eq(a.TempC, b.TempC) &&
		eq(a.MemUsedMiB, b.MemUsedMiB) && eq(a.UtilPct, b.UtilPct) && eq(a.EnergyMJ, b.EnergyMJ) &&
		a.Reasons == b.Reasons && a.HasReasons == b.HasReasons
}
