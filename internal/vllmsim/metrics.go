package vllmsim

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/common/expfmt"
)

// statsInterval is how often Serve logs engine statistics, as vLLM's
// LoggingStatLogger does.
const statsInterval = 10 * time.Second

// handleMetrics serves the current generation's registry in the Prometheus
// text format, after --sim-fault-metrics-delay, broken on purpose with
// --sim-fault-metrics-malformed.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	if d := s.opts.Faults.MetricsDelay; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	gen := s.current()
	if s.opts.Faults.MetricsBroken {
		s.writeBrokenMetrics(w, gen)
		return
	}
	// Always the text format (vLLM's prometheus_client never negotiates
	// protobuf): a client asking for protobuf still gets text.
	r2 := r.Clone(r.Context())
	r2.Header.Set("Accept", "text/plain; version=0.0.4")
	r2.Header.Del("Accept-Encoding")
	gen.metrics.ServeHTTP(w, r2)
}

// writeBrokenMetrics emits the real exposition with damage a scraper must
// detect: an unterminated label set first, then a sample line cut short.
func (s *Server) writeBrokenMetrics(w http.ResponseWriter, gen *generation) {
	var buf bytes.Buffer
	mfs, err := gen.reg.Gather()
	if err == nil {
		enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err = enc.Encode(mf); err != nil {
				break
			}
		}
	}
	if err != nil {
		http.Error(w, "gather metrics: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	name := s.opts.ServedModelNames[0]
	fmt.Fprintf(w, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n")
	fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\n")
	fmt.Fprintf(w, "vllm:num_requests_running{model_name=\"%s\",engine=\"0\" 1\n", name)
	text := buf.String()
	if i := strings.LastIndex(text, "\n"); i > 0 {
		// Drop the value of the last sample: "name{...}" with no number.
		if j := strings.LastIndexAny(text[:i], " "); j > 0 {
			text = text[:j] + "\n"
		}
	}
	_, _ = w.Write([]byte(text))
}

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
// both the current and the 0.9 metric names.
func readStats(gen *generation) engineStats {
	var st engineStats
	mfs, err := gen.reg.Gather()
	if err != nil {
		return st
	}
	for _, mf := range mfs {
		var dst *float64
		switch mf.GetName() {
		case "vllm:prompt_tokens_total", "vllm:prompt_tokens":
			dst = &st.prompt
		case "vllm:generation_tokens_total", "vllm:generation_tokens":
			dst = &st.generation
		case "vllm:num_requests_running":
			dst = &st.running
		case "vllm:num_requests_waiting":
			dst = &st.waiting
		case "vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc":
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
