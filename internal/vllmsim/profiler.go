package vllmsim

import (
	"net/http"
	"sync"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/torchtrace"
)

// maxProfiledSteps bounds one profiling session's memory: steps past it
// are counted, not kept.
const maxProfiledSteps = 1 << 20

// profiler is the server's torch profiler: one session at a time, its
// steps kept until /stop_profile writes them. Locks: mu (the session)
// may be held while the engine's lock is taken (ObserveSteps); the
// engine calls record under its lock, which takes stepsMu only.
type profiler struct {
	opts config.ProfilerOptions
	log  *logger

	mu      sync.Mutex
	active  bool
	started time.Time
	stop    func()

	stepsMu sync.Mutex
	steps   []engine.Step
	dropped int
}

// profileRoutes serves /start_profile and /stop_profile when the profiler
// is on; without it they are not routes (404), as in vLLM.
func (s *Server) profileRoutes(mux *http.ServeMux) {
	if !s.opts.Profiler.Enabled() {
		return
	}
	s.prof = &profiler{opts: s.opts.Profiler, log: s.log}
	s.log.warnf("Torch Profiler is enabled in the API server (traces in %s). This should ONLY be used for local development!", s.opts.Profiler.Dir)
	mux.HandleFunc("/start_profile", postOnly(s.handleStartProfile))
	mux.HandleFunc("/stop_profile", postOnly(s.handleStopProfile))
}

// postOnly answers another method with 405, as FastAPI does for a POST
// route (the catch-all would answer 404, as for a path not served).
func postOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"detail": "Method Not Allowed"})
			return
		}
		h(w, r)
	}
}

func (s *Server) handleStartProfile(w http.ResponseWriter, r *http.Request) {
	s.log.infof("Starting profiler...")
	p := s.prof
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.active {
		p.active, p.started = true, time.Now()
		p.stepsMu.Lock()
		p.steps, p.dropped = nil, 0
		p.stepsMu.Unlock()
		p.stop = func() {}
		if obs, ok := s.current().eng.(engine.StepObserver); ok {
			p.stop = obs.ObserveSteps(p.record)
		} else {
			s.log.warnf("Profiler: the fixed-timing engine has no steps; the trace holds none")
		}
	}
	s.log.infof("Profiler started.")
	w.WriteHeader(http.StatusOK)
}

func (s *Server) handleStopProfile(w http.ResponseWriter, r *http.Request) {
	s.log.infof("Stopping profiler...")
	p := s.prof
	p.mu.Lock()
	if !p.active {
		p.mu.Unlock()
		s.log.warnf("Profiler was not started: no trace written")
		w.WriteHeader(http.StatusOK)
		return
	}
	p.stop()
	p.stepsMu.Lock()
	steps, dropped, started := p.steps, p.dropped, p.started
	p.steps = nil
	p.stepsMu.Unlock()
	p.active, p.stop = false, nil
	p.mu.Unlock()
	path, err := torchtrace.Write(p.opts, started, time.Now(), steps, dropped, s.info)
	if err != nil {
		s.log.errorf("Profiler: %v", err)
		writeError(w, http.StatusInternalServerError, "InternalServerError", "", "write the profiler trace: "+err.Error())
		return
	}
	s.log.infof("Profiler stopped: %d engine steps in %s", len(steps), path)
	w.WriteHeader(http.StatusOK)
}

// record keeps one step (called by the engine under its lock).
func (p *profiler) record(st engine.Step) {
	p.stepsMu.Lock()
	defer p.stepsMu.Unlock()
	if len(p.steps) >= maxProfiledSteps {
		p.dropped++
		return
	}
	p.steps = append(p.steps, st)
}
