package capacity

import (
	"math"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
)

// misses is the early stop of a run at rate level lasting d: it may miss
// the SLO (1 − GoodputMin) × n times, n the most requests the run can send
// but with a chance below about 1e-9 (a Poisson count of mean E exceeds
// max(2E, E + 6√E + 6) that rarely), so a run stopped there fails whatever
// its remaining requests would have done.
func (r Runner) misses(level float64, d time.Duration) *load.Misses {
	if !(r.GoodputMin > 0) || r.GoodputMin > 1 || d <= 0 {
		return nil
	}
	expected := level * d.Seconds()
	most := math.Max(2*expected, expected+6*math.Sqrt(expected)+6)
	allowed := int(math.Floor((1-r.GoodputMin)*most + 1e-9))
	slo := r.SLO
	return &load.Misses{Allowed: allowed, TTFT: slo.TTFT, Missed: func(s *sample.Sample) bool { return !slo.Good(s) }}
}

// stoppedEarly marks a trial whose run stopped on its verdict, and reads
// its users from the requests in flight: with few or no requests
// completed, Little's law over completions cannot.
func stoppedEarly(t *Trial, res *result.Result) {
	lr := res.Load
	switch {
	case lr.Overload != nil:
		t.Stopped = lr.Overload.Error()
		t.Pace = lr.Overload.Pace
	case lr.Decided != nil:
		t.Stopped = lr.Decided.Error()
	default:
		return
	}
	t.Notes = append(t.Notes, "stopped early: "+t.Stopped)
	t.Requests += firstTokenMisses(lr, res.Summary.SLO)
	if u := meanInFlight(lr); u > 0 && res.Point.Load.Concurrency == 0 {
		t.Users = u
	}
}

// firstTokenMisses counts the requests the stop cut short (interrupted)
// whose first token had already missed the SLO's TTFT: they are known
// misses, and the trial counts them with its requests (none good).
func firstTokenMisses(lr *load.Result, slo stats.SLO) int {
	n := 0
	for _, s := range lr.Measured() {
		if s.Interrupted() && len(s.Chunks) > 0 && slo.TTFT > 0 && s.Chunks[0].At > slo.TTFT {
			n++
		}
	}
	return n
}

// meanInFlight is the time-average of the measured requests in flight
// over the measured phase (0 when it has no length).
func meanInFlight(lr *load.Result) float64 {
	span := lr.End.Sub(lr.Start)
	if span <= 0 {
		return 0
	}
	var busy time.Duration
	for _, s := range lr.Measured() {
		if !s.Done.IsZero() && !s.Sent.IsZero() {
			busy += s.Done.Sub(s.Sent)
		}
	}
	return busy.Seconds() / span.Seconds()
}
