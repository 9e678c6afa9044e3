package check

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/vllmperf/vllmperf/internal/target/scrape"
)

// What makes a running plateau a deployment's own cap (batching, for a
// server the suite did not start).
const (
	// plateauMinPoints is how many sampler points must be on the plateau:
	// one scrape caught at the peak is no cap.
	plateauMinPoints = 3
	// plateauMinShare is the share of the points with requests waiting
	// that must be on the plateau: a cap holds the queue at one level for
	// most of the time requests wait, while a ramp (the batch growing by
	// the scheduler's token budget) queues them at every level on the way
	// up.
	plateauMinShare = 0.5
	// plateauBand is how far from the plateau's level (the median running
	// count while requests waited) a point may be and still be on it: a
	// KV-cache-limited batch moves as requests finish and free blocks.
	plateauBand = 0.25
	// kvNearFull is the KV-cache usage (0–1) at which a plateau with
	// requests waiting is the cache's limit, not the server's max-num-seqs.
	kvNearFull = 0.9
)

// runPlateau is where requests waited while the running count held at
// one level.
type runPlateau struct {
	level    float64       // the median running count while requests waited
	points   int           // points on it
	queued   int           // points with requests waiting, on it or not
	span     time.Duration // from its first point to its last
	low, top float64       // the running counts on it
	waiting  float64       // the most waiting on it
	kvPeak   float64       // the highest KV-cache usage on it
	kvKnown  bool          // every point on it had the usage
}

// findPlateau finds the plateau of ts: the points with requests waiting
// whose running count is within plateauBand of the median over them.
func findPlateau(ts *scrape.TimeSeries) runPlateau {
	p := runPlateau{kvKnown: true}
	var queued []scrape.Point
	var running []float64
	for _, pt := range ts.Points {
		if pt.Waiting > 0 {
			queued = append(queued, pt)
			running = append(running, pt.Running)
		}
	}
	p.queued = len(queued)
	if p.queued == 0 {
		return p
	}
	slices.Sort(running)
	p.level = running[len(running)/2]
	var first time.Time
	for _, pt := range queued {
		if p.level <= 1 || math.Abs(pt.Running-p.level) > plateauBand*p.level {
			continue
		}
		if p.points == 0 {
			first, p.low, p.top = pt.At, pt.Running, pt.Running
		}
		p.points++
		p.span = pt.At.Sub(first)
		p.low, p.top = min(p.low, pt.Running), max(p.top, pt.Running)
		p.waiting = max(p.waiting, pt.Waiting)
		if slices.Contains(pt.Missing, scrape.KVCacheUsagePerc) {
			p.kvKnown = false
		} else {
			p.kvPeak = max(p.kvPeak, pt.KVUsage)
		}
	}
	return p
}

// sustained reports whether the plateau held long enough to be a cap.
func (p runPlateau) sustained() bool {
	return p.points >= plateauMinPoints && float64(p.points) >= plateauMinShare*float64(p.queued)
}

// kvLimited reports whether the KV cache was near full on the plateau.
func (p runPlateau) kvLimited() bool { return p.kvKnown && p.kvPeak >= kvNearFull }

// deploymentCap judges a deployment's batching below the concurrency
// sent: a sustained plateau with a queue is its own cap, named as the KV
// cache's when the cache was near full, else as its max-num-seqs; a level
// held only briefly (one scrape, a ramp) shows no cap. ok is false when
// no request waited above one running (the caller's failure stands).
func deploymentCap(ts *scrape.TimeSeries, conc int, detail string) (r Result, ok bool) {
	const name = "batching"
	p := findPlateau(ts)
	switch {
	case p.queued == 0 || p.level <= 1:
		return Result{}, false
	case p.sustained() && p.kvLimited():
		return pass(name, "the KV cache limits the batch: about %g running (%g–%g) with up to %g waiting in %d of the %d samples with a queue (over %s) while the KV cache was %.0f%% full, so requests queue for cache blocks, not for max-num-seqs; concurrency %d",
			p.level, p.low, p.top, p.waiting, p.points, p.queued, p.span, 100*p.kvPeak, conc), true
	case p.sustained():
		kv := "KV-cache usage not exposed"
		if p.kvKnown {
			kv = fmt.Sprintf("KV cache at most %.0f%% full", 100*p.kvPeak)
		}
		return pass(name, "the server caps its batch at %g running (up to %g waiting while %g–%g ran, in %d of the %d samples with a queue, over %s; %s): its own max-num-seqs, which the suite did not set; concurrency %d",
			p.level, p.waiting, p.low, p.top, p.points, p.queued, p.span, kv, conc), true
	}
	return fail(name, "%s: with requests waiting, running stayed near %g in only %d of the %d samples that had a queue (a plateau needs %d and half of them): a ramp or a passing moment, not a sustained plateau that shows the server's own cap; run longer (--duration, more requests) to see one",
		detail, p.level, p.points, p.queued, plateauMinPoints), true
}
