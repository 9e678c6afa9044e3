package vllmsim

import (
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// paceInterval is how often Serve checks whether the engine keeps real
// time (engine.MetricLostSeconds); paceWarnEvery spaces its warnings.
const (
	paceInterval  = time.Second
	paceWarnEvery = config.StatsInterval
)

// watchPace warns, at most once every paceWarnEvery, when the engine lost
// more than engine.BehindThreshold of a paceInterval to the host (its loop
// woke too late to keep the timing model's schedule), until stop closes:
// the figures measured then are the host's, not the model's.
func (s *Server) watchPace(stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastLost float64
	var lastGen *generation
	last := time.Now()
	var warned time.Time
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			gen := s.current()
			lost := readLost(gen)
			if gen != lastGen {
				lastLost, lastGen = 0, gen
			}
			share := (lost - lastLost) / now.Sub(last).Seconds()
			lastLost, last = lost, now
			if share <= engine.BehindThreshold || now.Sub(warned) < paceWarnEvery {
				continue
			}
			warned = now
			s.log.warnf("Behind real time: the engine lost %.0f%% of the last %v to the host (%.3f s in all, %s): its loop wakes too late to keep the timing model's step schedule, "+
				"so the throughput and latencies measured now are the host's, not the model's (more than %.0f%%: free CPU for vllm-sim, or lower the load or the token rate)",
				100*share, interval, lost, engine.MetricLostSeconds, 100*engine.BehindThreshold)
		}
	}
}

// readLost reads engine.MetricLostSeconds from gen's registry (the
// fixed-timing engine keeps its own timing and leaves it at 0).
func readLost(gen *generation) float64 {
	mfs, err := gen.reg.Gather()
	if err != nil {
		return 0
	}
	for _, mf := range mfs {
		if mf.GetName() != engine.MetricLostSeconds {
			continue
		}
		v := 0.0
		for _, m := range mf.GetMetric() {
			v += m.GetCounter().GetValue()
		}
		return v
	}
	return 0
}
