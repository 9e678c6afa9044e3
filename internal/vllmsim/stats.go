package vllmsim

import (
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/metrics"
)

// logStats logs a vLLM-style throughput line every interval while there is
// traffic, until stop closes.
func (s *Server) logStats(stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var lastPrompt, lastGen float64
	var lastGenPtr *generation
	last := time.Now()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			gen := s.current()
			st := readStats(gen)
			if gen != lastGenPtr {
				lastPrompt, lastGen, lastGenPtr = 0, 0, gen
			}
			secs := now.Sub(last).Seconds()
			last = now
			dp, dg := st.prompt-lastPrompt, st.generation-lastGen
			lastPrompt, lastGen = st.prompt, st.generation
			if dp == 0 && dg == 0 && st.running == 0 && st.waiting == 0 {
				continue
			}
			s.log.infof("Engine 000: Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %.0f reqs, Waiting: %.0f reqs, GPU KV cache usage: %.1f%%",
				dp/secs, dg/secs, st.running, st.waiting, st.kvUsage*100)
		}
	}
}

// engineStats are the figures of the stats log line.
type engineStats struct {
	prompt, generation, running, waiting, kvUsage float64
}

// readStats sums the figures of the stats line from the registry, under
// the names of every family (metrics.StatOf).
func readStats(gen *generation) engineStats {
	var st engineStats
	mfs, err := gen.reg.Gather()
	if err != nil {
		return st
	}
	for _, mf := range mfs {
		var dst *float64
		switch metrics.StatOf(mf.GetName()) {
		case metrics.StatPrompt:
			dst = &st.prompt
		case metrics.StatGeneration:
			dst = &st.generation
		case metrics.StatRunning:
			dst = &st.running
		case metrics.StatWaiting:
			dst = &st.waiting
		case metrics.StatKVUsage:
			dst = &st.kvUsage
		default:
			continue
		}
		for _, m := range mf.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				*dst += m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				*dst += m.GetGauge().GetValue()
			case m.GetUntyped() != nil:
				*dst += m.GetUntyped().GetValue()
			}
		}
	}
	return st
}
