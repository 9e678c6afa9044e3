package result

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// RampWindows is how many windows a ramp-up is reported in (fewer when it
// has under 10 requests a window).
const RampWindows = 10

// rampFollow is the share of the arrival rate below which the achieved
// throughput no longer follows it.
const rampFollow = 0.9

// Window is a stretch of a run's measured phase and the figures of the
// requests that arrived in it.
type Window struct {
	// From and To bound it, as offsets from the measured phase's start.
	From, To time.Duration
	// Offered is the request rate offered in it (0 for a closed loop);
	// Achieved the requests that completed in it per second (a ramp's
	// window: in its time shifted by its median E2EL); Arrived, for a
	// ramp's window, the rate its requests arrived at (its requests over
	// its length: the offered rate with the draw's noise).
	Offered, Achieved, Arrived float64
	// Summary covers the requests that arrived in it.
	Summary *stats.Summary
}

// Windows is a run's steady-state window and, for a ramp-up, its rate
// windows.
type Windows struct {
	// Steady is the window the run treats as steady: from when its target
	// concurrency or rate is reached to when arrivals stop; nil when it
	// has none, and NoSteady says why.
	Steady   *Window
	NoSteady string
	// Rule says how Steady was chosen.
	Rule string
	// Carried names the figures the benchmark metrics (the summary, the
	// JSON's vLLM keys, the bench lines) carry: "whole run".
	Carried string
	// Ramp holds a ramp-up's windows in order (nil for other runs).
	Ramp []Window
	// SLO is the per-request SLO the ramp's P99s are held to (the run's
	// goodput SLO, else thresholds.yaml's goodput:).
	SLO stats.SLO
	// SLOExit is the offered rate of the first ramp window whose TTFT or
	// TPOT P99 is over SLO (0: none was); Saturation the offered rate of
	// the first window whose achieved throughput fell below 90% of it
	// (0: none did).
	SLOExit, Saturation float64
	// Judged counts the ramp windows judged for throughput (rampJudged).
	Judged int
}

// Windows computes r's steady-state window and, for a ramp-up, its rate
// windows.
func (r *Result) Windows() *Windows {
	w := &Windows{Carried: "whole run"}
	if r.Load == nil {
		w.NoSteady = "no load ran"
		return w
	}
	ms := r.Load.Measured()
	cfg := r.Point.Load
	if cfg.Ramp != nil {
		w.NoSteady = "a ramp-up changes its rate throughout; see its rate windows"
		w.SLO = r.rampSLO()
		w.Ramp = rampWindows(ms, r.Load.Start, *cfg.Ramp, cfg.Requests, w.SLO)
		w.SLOExit, w.Saturation, w.Judged = rampVerdicts(w.Ramp, w.SLO)
		return w
	}
	from, rule, ok := fillTime(ms, cfg)
	w.Rule = rule
	if !ok || len(ms) == 0 {
		w.NoSteady = rule
		return w
	}
	to := ms[len(ms)-1].Scheduled.Sub(r.Load.Start)
	if from >= to {
		w.NoSteady = fmt.Sprintf("%s, at %v, came after the last arrival (%v): the run is too short to reach a steady state",
			rule, from.Round(time.Millisecond), to.Round(time.Millisecond))
		return w
	}
	win, err := window(ms, r.Load.Start, from, to, r.Summary.SLO)
	if err != nil {
		w.NoSteady = err.Error()
		return w
	}
	win.Offered = cfg.Rate
	w.Steady = win
	return w
}

// fillTime is when the run reaches its target: a closed loop of N when its
// N-th measured request is sent; an open loop once the median measured
// E2EL has passed since the first arrival (by Little's law, the requests
// in flight then reach rate × E2EL).
func fillTime(ms []sample.Sample, cfg load.Config) (time.Duration, string, bool) {
	if len(ms) == 0 {
		return 0, "no measured request", false
	}
	start := ms[0].Scheduled
	if n := cfg.Concurrency; n > 0 {
		if len(ms) <= n {
			return 0, fmt.Sprintf("%d requests, no more than the concurrency (%d): the run never held its concurrency with a request to spare", len(ms), n), false
		}
		return ms[n-1].Sent.Sub(start), fmt.Sprintf("from the %d-th request sent (the concurrency reached) to the last arrival", n), true
	}
	var e2el []time.Duration
	for i := range ms {
		if d, ok := ms[i].E2EL(); ok {
			e2el = append(e2el, d)
		}
	}
	if len(e2el) == 0 {
		return 0, "no request completed: no E2EL to tell when the load filled the server", false
	}
	slices.Sort(e2el)
	med := e2el[len(e2el)/2]
	return med, fmt.Sprintf("from one median E2EL (%v) after the first arrival, when the requests in flight reach rate × E2EL, to the last arrival", med.Round(time.Millisecond)), true
}

// window summarizes the requests that arrived between from and to.
func window(ms []sample.Sample, start time.Time, from, to time.Duration, slo stats.SLO) (*Window, error) {
	var in []sample.Sample
	end := start.Add(to)
	completed := 0
	for _, s := range ms {
		if at := s.Scheduled.Sub(start); at >= from && at <= to {
			in = append(in, s)
			if s.Done.After(end) {
				end = s.Done
			}
		}
	}
	for _, s := range ms {
		if at := s.Done.Sub(start); s.OK() && at >= from && at < to {
			completed++
		}
	}
	if len(in) == 0 {
		return nil, fmt.Errorf("no request arrived between %v and %v", from.Round(time.Millisecond), to.Round(time.Millisecond))
	}
	sum, err := stats.Summarize(in, start.Add(from), end, slo)
	if err != nil {
		return nil, fmt.Errorf("the window's figures: %w", err)
	}
	return &Window{From: from, To: to, Achieved: float64(completed) / (to - from).Seconds(), Summary: sum}, nil
}

// rampSLO is the run's goodput SLO, else thresholds.yaml's.
func (r *Result) rampSLO() stats.SLO {
	if r.Summary != nil && r.Summary.SLO.Set() {
		return r.Summary.SLO
	}
	g := thresholds.Default().Scope("", "").Goodput
	return stats.SLO{TTFT: g.TTFT, TPOT: g.TPOT, E2EL: g.E2EL}
}

// rampWindows cuts a ramp of n requests into RampWindows windows of as
// many requests each, by arrival.
func rampWindows(ms []sample.Sample, start time.Time, ramp load.Ramp, n int, slo stats.SLO) []Window {
	k := min(RampWindows, max(len(ms)/10, 1))
	var out []Window
	for j := range k {
		lo, hi := j*len(ms)/k, (j+1)*len(ms)/k
		if lo >= hi {
			continue
		}
		from := ms[lo].Scheduled.Sub(start)
		var to time.Duration
		if hi < len(ms) {
			to = ms[hi].Scheduled.Sub(start)
		} else {
			to = ms[hi-1].Scheduled.Sub(start) + time.Duration(float64(time.Second)/ramp.RateAt(n-1, n))
		}
		w, err := window(ms[lo:hi], start, from, to, slo)
		if err != nil {
			continue
		}
		// Completions in the window's time shifted by its median E2EL,
		// whichever window sent them: a server that keeps up has then
		// completed the window's own requests; one past capacity
		// completes at its own pace whatever the shift.
		lag := time.Duration(0)
		if med, ok := w.Summary.E2EL.Pct(50); ok {
			lag = time.Duration(med * float64(time.Millisecond))
		}
		done := 0
		for _, s := range ms {
			if at := s.Done.Sub(start) - lag; s.OK() && at >= from && at < to {
				done++
			}
		}
		w.Achieved = float64(done) / (to - from).Seconds()
		w.Arrived = float64(hi-lo) / (to - from).Seconds()
		offered := 0.0
		for i := lo; i < hi; i++ {
			offered += ramp.RateAt(ms[i].Index-ms[0].Index, n)
		}
		w.Offered = offered / float64(hi-lo)
		out = append(out, *w)
	}
	return out
}

// rampVerdicts finds the offered rate where the P99s leave the SLO (the
// first window over it) and where the achieved throughput stops following
// the offered rate: the first judged window from which every judged window
// achieved under 90% of the rate its requests arrived at, at least two of
// them. judged counts the windows judged for throughput (rampJudged).
func rampVerdicts(ws []Window, slo stats.SLO) (sloExit, saturation float64, judged int) {
	for _, w := range ws {
		if overSLO(w.Summary, slo) {
			sloExit = w.Offered
			break
		}
	}
	below := 0
	for i := len(ws) - 1; i >= 0; i-- {
		if !rampJudged(ws, i) {
			continue
		}
		judged++
		if below < judged-1 || ws[i].Achieved >= rampFollow*ws[i].Arrived {
			continue // a later judged window followed: no saturation from here
		}
		if below++; below >= 2 {
			saturation = ws[i].Offered
		}
	}
	return sloExit, saturation, judged
}

// rampJudged reports whether ramp window i is judged for throughput: not
// the first (the server filling) nor the last (its requests end after it).
func rampJudged(ws []Window, i int) bool { return i >= 1 && i <= len(ws)-2 }

// overSLO reports whether s's TTFT or TPOT P99 is over slo's limit.
func overSLO(s *stats.Summary, slo stats.SLO) bool {
	over := func(d stats.Dist, limit time.Duration) bool {
		v, ok := d.Pct(99)
		return limit > 0 && ok && v > float64(limit)/float64(time.Millisecond)
	}
	return over(s.TTFT, slo.TTFT) || over(s.TPOT, slo.TPOT) || (s.Completed == 0 && s.Requests > 0)
}

// pct is d's percentile p in milliseconds, NaN when d has none.
func pct(d stats.Dist, p float64) float64 {
	if v, ok := d.Pct(p); ok {
		return v
	}
	return math.NaN()
}
