package vllmsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/tokenizer"
)

// Version is what GET /version reports: the vLLM release whose API and
// metric names the simulator follows, suffixed "-sim" so that a client can
// tell it from a real server. With --sim-metrics-version 0.9 it reports
// Version09; with --sim-vllm-version X.Y.Z, "X.Y.Z-sim".
const Version = "0.11.0-sim"

// Version09 is /version with --sim-metrics-version 0.9: the last 0.9
// release, whose metric names the server then exposes.
const Version09 = "0.9.2-sim"

// DefaultShutdownGrace is how long Serve lets in-flight requests finish
// after its context is done before it aborts them.
const DefaultShutdownGrace = 5 * time.Second

// Waits of Serve's shutdown and its HTTP server.
const (
	// abortGrace is how long aborted requests get to end after the grace
	// period before the connections are closed.
	abortGrace = time.Second
	// readHeaderTimeout bounds reading a request's header.
	readHeaderTimeout = 30 * time.Second
)

// generation is one life of the simulated server: an engine and the
// registry its metrics live on. A --sim-fault-restart-after restart replaces
// the generation, which resets every counter to 0.
type generation struct {
	eng     engine.Core
	reg     *prometheus.Registry
	gather  prometheus.Gatherer // reg less the --sim-fault-drop-metric families
	metrics http.Handler        // /metrics over gather
	eos     int32               // the model's EOS token id: counted, never rendered
}

// Server is a simulated vLLM OpenAI-compatible API server: the HTTP API,
// the tokenizer, start-up, fault injection and /metrics over a simulated
// engine (package engine).
//
// A Server's life starts in New: the --sim-startup clock runs from there.
// Serve serves on a listener until its context is done; Handler serves the
// same API for httptest. Close releases the engine; Serve calls it.
type Server struct {
	opts    config.Options
	info    engine.Info         // the first engine's: the effective configuration
	tok     tokenizer.Tokenizer // the served model's vocabulary (info.VocabSize)
	log     *logger
	created time.Time
	handler http.Handler
	faults  *faultInjector
	grace   time.Duration

	mu        sync.Mutex
	gen       *generation
	finished  int  // requests that reached the engine and ended
	restarted bool // the --sim-fault-restart-after restart happened
	dead      bool // the --sim-fault-die-after death happened
	closed    bool

	prof *profiler // nil unless Options.Profiler is on
}

// New parses vllm serve arguments (see Usage), reads vLLM's
// VLLM_TORCH_PROFILER_DIR from the environment as vllm serve does, starts
// the simulated engine and returns a server ready to Serve. log receives vLLM-style log lines
// (nil discards them); the --api-key value never appears in it. Errors are
// *ArgError for bad arguments (including a configuration the engine
// refuses) or ErrHelp for --help.
func New(args []string, log io.Writer) (*Server, error) {
	opts, err := config.ParseArgs(args)
	if err != nil {
		return nil, err
	}
	opts.ProfilerFromEnv(os.Getenv)
	return NewWithOptions(opts, log)
}

// NewWithOptions is New for options built in Go (start from
// DefaultOptions): it validates them as ParseArgs does.
func NewWithOptions(opts config.Options, log io.Writer) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	s := &Server{
		opts:    opts,
		log:     &logger{w: log},
		created: time.Now(),
		faults:  newFaultInjector(opts.Seed, opts.Faults),
		grace:   DefaultShutdownGrace,
	}
	s.log.infof("vLLM-sim API server version %s", s.version())
	gen, err := s.newGeneration()
	if err != nil {
		return nil, err
	}
	s.gen = gen
	s.info = gen.eng.Info()
	s.tok = tokenizer.NewTokenizer(s.info.VocabSize)
	s.logEngine()
	s.handler = s.routes()
	return s, nil
}

// newGeneration starts an engine on a fresh registry.
func (s *Server) newGeneration() (*generation, error) {
	reg := prometheus.NewRegistry()
	// The standard process collector's start time, as vLLM's Python
	// registry exposes it: one per generation, so that a restart shows in
	// it even when the counters have already grown past their old values.
	start := prometheus.NewGauge(prometheus.GaugeOpts{Name: "process_start_time_seconds", Help: "Start time of the process since unix epoch in seconds."})
	start.Set(float64(time.Now().UnixNano()) / 1e9)
	reg.MustRegister(start)
	eng, err := engine.Start(s.opts.Config, reg)
	if err != nil {
		// Options.Validate passed: the engine refuses only what it alone
		// can judge, a command-line problem all the same (exit 2).
		return nil, config.EngineArgError(err)
	}
	gather, err := dropMetrics(reg, s.opts.Faults.DropMetrics)
	if err != nil {
		eng.Close()
		return nil, err
	}
	return &generation{
		eos:     eng.Info().EOSTokenID,
		eng:     eng,
		reg:     reg,
		gather:  gather,
		metrics: promhttp.HandlerFor(gather, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}),
	}, nil
}

// version is /version's answer.
func (s *Server) version() string {
	if s.opts.Release != "" {
		return s.opts.Release + "-sim"
	}
	if s.opts.MetricsVersion == engine.MetricsV09 {
		return Version09
	}
	return Version
}

// Options returns the options (the API key included: do not log it).
func (s *Server) Options() config.Options { return s.opts }

// EngineConfig returns the engine configuration in effect: the derived
// sizes filled in.
func (s *Server) EngineConfig() engine.Config { return s.info.Config }

// Addr is the address the flags ask to listen on: --host (default
// 127.0.0.1) and --port (default 8000) as host:port.
func (s *Server) Addr() string {
	return net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
}

// Handler returns the server's HTTP API (for httptest). Call Close when done
// if Serve is never called.
func (s *Server) Handler() http.Handler { return s.handler }

// Registry returns the Prometheus registry of the current engine generation
// (a restart replaces it).
func (s *Server) Registry() *prometheus.Registry { return s.current().reg }

func (s *Server) current() *generation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

// state returns the current generation and whether the engine died.
func (s *Server) state() (*generation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen, s.dead
}

// started reports whether --sim-startup has passed.
func (s *Server) started() bool { return time.Since(s.created) >= s.opts.Startup }

// healthy reports whether /health answers 200, and why not.
func (s *Server) healthy() (bool, string) {
	if !s.started() {
		return false, "server is starting up"
	}
	s.mu.Lock()
	dead, closed, gen := s.dead, s.closed, s.gen
	s.mu.Unlock()
	switch {
	case closed:
		return false, "server is shutting down"
	case dead || !gen.eng.Healthy():
		return false, "engine is dead"
	}
	return true, ""
}

// Close stops the engine; requests still in flight end with a 503 error. It
// is safe to call more than once; Serve calls it on return.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	gen := s.gen
	s.mu.Unlock()
	gen.eng.Close()
	return nil
}

// Serve serves the API on ln until ctx is done, then shuts down gracefully:
// it stops accepting, gives in-flight requests DefaultShutdownGrace to end,
// aborts the rest and closes the engine. It returns nil after a shutdown
// caused by ctx, or the listener's error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	defer s.Close()
	reqCtx, abort := context.WithCancel(context.WithoutCancel(ctx))
	defer abort()
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: readHeaderTimeout,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ErrorLog:          stdlog.New(logWriter{s.log}, "", 0),
	}
	s.log.infof("Starting vLLM server on http://%s", ln.Addr())
	s.log.infof("Available routes are: %s", routeList)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	stopLogs := s.startLogs()
	defer stopLogs()

	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.log.infof("Shutting down")
	s.shutdown(srv, abort)
	<-errc
	s.log.infof("Application shutdown complete.")
	return nil
}

// shutdown stops srv: in-flight requests get the grace period, then are
// aborted (the engine counts them as aborted) and what is left is closed.
func (s *Server) shutdown(srv *http.Server, abort context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), s.grace)
	err := srv.Shutdown(ctx)
	cancel()
	if err == nil {
		return
	}
	abort()
	ctx, cancel = context.WithTimeout(context.Background(), abortGrace)
	defer cancel()
	if srv.Shutdown(ctx) != nil {
		_ = srv.Close()
	}
}

// startLogs starts the start-up announcement and the stats log; the
// function it returns stops them and waits.
func (s *Server) startLogs() func() {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() { s.announceStartup(stop) })
	if !s.opts.DisableLogStats {
		wg.Go(func() { s.logStats(stop, config.StatsInterval) })
	}
	wg.Go(func() { s.watchPace(stop, paceInterval) })
	return func() {
		close(stop)
		wg.Wait()
	}
}

// announceStartup logs vLLM's ready lines once --sim-startup has passed.
func (s *Server) announceStartup(stop <-chan struct{}) {
	if wait := s.opts.Startup - time.Since(s.created); wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
	s.log.infof("init engine (profile, create kv cache, warmup model) took %.2f seconds", time.Since(s.created).Seconds())
	s.log.infof("Application startup complete.")
}
