package vllmsim

import (
	"context"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// Version is what GET /version reports: the vLLM release whose API and
// metric names the simulator follows, suffixed "-sim" so that a client can
// tell it from a real server. With --sim-metrics-version 0.9 it reports
// "0.9.2-sim".
const Version = "0.11.0-sim"

// versionFor returns the /version string for a --sim-metrics-version value.
func versionFor(metricsVersion string) string {
	if metricsVersion == "0.9" {
		return "0.9.2-sim"
	}
	return Version
}

// DefaultShutdownGrace is how long Serve lets in-flight requests finish
// after its context is done before it aborts them.
const DefaultShutdownGrace = 5 * time.Second

// simEngine is what the server needs of the engine; *engine.Engine has it.
type simEngine interface {
	Submit(ctx context.Context, req engine.Request) (<-chan engine.Output, error)
	Close()
	Kill()
	Healthy() bool
	Info() engine.Info
}

// newEngine starts an engine that registers its metrics on reg.
var newEngine = func(cfg engine.Config, reg prometheus.Registerer) (simEngine, error) {
	e, err := engine.New(cfg, reg)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// generation is one life of the simulated server: an engine and the
// registry its metrics live on. A --sim-fault-restart-after restart replaces
// the generation, which resets every counter to 0.
type generation struct {
	eng     simEngine
	reg     *prometheus.Registry
	metrics http.Handler
	eos     int32 // the model's EOS token id: counted, never rendered
}

// Server is a simulated vLLM OpenAI-compatible API server: the HTTP API,
// the tokenizer, start-up, fault injection and /metrics over a simulated
// engine (package engine).
//
// A Server's life starts in New: the --sim-startup clock runs from there.
// Serve serves on a listener until its context is done; Handler serves the
// same API for httptest. Close releases the engine; Serve calls it.
type Server struct {
	opts    Options
	cfg     engine.Config // engine.Defaults applied
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
}

// New parses vllm serve arguments (see Usage), starts the simulated engine
// and returns a server ready to Serve. log receives vLLM-style log lines
// (nil discards them); the --api-key value never appears in it. Errors are
// *ArgError for bad arguments (including a configuration the engine
// refuses) or ErrHelp for --help.
func New(args []string, log io.Writer) (*Server, error) {
	opts, err := ParseArgs(args)
	if err != nil {
		return nil, err
	}
	return NewWithOptions(opts, log)
}

// NewWithOptions is New for options already parsed by ParseArgs.
func NewWithOptions(opts Options, log io.Writer) (*Server, error) {
	if log == nil {
		log = io.Discard
	}
	s := &Server{
		opts:    opts,
		log:     &logger{w: log},
		created: time.Now(),
		faults:  newFaultInjector(opts.SimSeed, opts.Faults),
		grace:   DefaultShutdownGrace,
	}
	s.cfg = engine.Defaults(opts.engineConfig())
	s.log.infof("vLLM-sim API server version %s", versionFor(opts.SimMetricsVersion))
	s.log.infof("args: %s", redactedArgs(opts, s.cfg))
	gen, err := s.newGeneration()
	if err != nil {
		// The engine refuses only configurations (an unknown GPU preset,
		// sizes that do not fit): a command-line problem, exit 2.
		return nil, &ArgError{Msg: "invalid engine configuration: " + err.Error()}
	}
	s.gen = gen
	info := gen.eng.Info()
	if info.ModelNote != "" {
		s.log.warnf("%s", info.ModelNote)
	}
	s.log.infof("GPU KV cache size: %d tokens (%d blocks of %d)", info.KVCacheTokens, info.NumGPUBlocks, info.BlockSize)
	if s.cfg.MaxModelLen > 0 {
		s.log.infof("Maximum concurrency for %d tokens per request: %.2fx", s.cfg.MaxModelLen, float64(info.KVCacheTokens)/float64(s.cfg.MaxModelLen))
	}
	s.handler = s.routes()
	return s, nil
}

func (s *Server) newGeneration() (*generation, error) {
	reg := prometheus.NewRegistry()
	eng, err := newEngine(s.cfg, reg)
	if err != nil {
		return nil, err
	}
	return &generation{
		eos:     eng.Info().EOSTokenID,
		eng:     eng,
		reg:     reg,
		metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}),
	}, nil
}

// engineConfig maps the serve flags onto the engine's configuration. Zero
// values are left for engine.Defaults.
func (o Options) engineConfig() engine.Config {
	return engine.Config{
		Model:                     o.Model,
		ServedModelNames:          append([]string(nil), o.ServedModelNames...),
		MaxNumSeqs:                o.MaxNumSeqs,
		MaxNumBatchedTokens:       o.MaxNumBatchedTokens,
		MaxModelLen:               o.MaxModelLen,
		BlockSize:                 o.BlockSize,
		GPUMemoryUtilization:      o.GPUMemoryUtilization,
		Dtype:                     o.Dtype,
		KVCacheDtype:              o.KVCacheDtype,
		EnablePrefixCaching:       o.EnablePrefixCaching,
		EnableChunkedPrefill:      o.EnableChunkedPrefill,
		TensorParallelSize:        o.TensorParallelSize,
		SpeculativeConfig:         o.SpeculativeConfig,
		LongPrefillTokenThreshold: o.LongPrefillThreshold,
		GPU:                       o.SimGPU,
		Seed:                      o.SimSeed,
		Jitter:                    o.SimJitter,
		Slowdown:                  o.SimSlowdown,
		ColdStart:                 o.SimColdStart,
		FixedTTFT:                 o.SimFixedTTFT,
		FixedITL:                  o.SimFixedITL,
		MetricsVersion:            o.SimMetricsVersion,
		EOSProbability:            o.SimEOSProb,
	}
}

// redactedArgs renders the options for the start-up log with the engine's
// effective settings (defaults applied), the API key replaced by a marker.
func redactedArgs(o Options, c engine.Config) string {
	key := "None"
	if o.APIKey != "" {
		key = "'<redacted>'"
	}
	return fmt.Sprintf("model=%q served_model_name=%q host=%s port=%d api_key=%s max_num_seqs=%d max_num_batched_tokens=%d max_model_len=%d block_size=%d gpu_memory_utilization=%g dtype=%s kv_cache_dtype=%s enable_prefix_caching=%t enable_chunked_prefill=%t tensor_parallel_size=%d speculative_config=%q sim_gpu=%s sim_seed=%d sim_startup=%s faults=%+v",
		o.Model, o.ServedModelNames, o.Host, o.Port, key, c.MaxNumSeqs, c.MaxNumBatchedTokens, c.MaxModelLen,
		c.BlockSize, c.GPUMemoryUtilization, c.Dtype, c.KVCacheDtype, c.EnablePrefixCaching, c.EnableChunkedPrefill,
		c.TensorParallelSize, c.SpeculativeConfig, c.GPU, c.Seed, o.SimStartup, o.Faults)
}

// Options returns the parsed options (the API key included: do not log it).
func (s *Server) Options() Options { return s.opts }

// EngineConfig returns the engine configuration, defaults filled in.
func (s *Server) EngineConfig() engine.Config { return s.cfg }

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

// started reports whether --sim-startup has passed.
func (s *Server) started() bool { return time.Since(s.created) >= s.opts.SimStartup }

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

// requestFinished counts one request that reached the engine and ended, and
// runs the restart and die faults when their count is reached. It runs
// before the request's last bytes are written, so a client that has read
// the whole response sees the effect.
func (s *Server) requestFinished() {
	s.mu.Lock()
	s.finished++
	n := s.finished
	f := s.opts.Faults
	var old *generation
	if f.RestartAfter > 0 && !s.restarted && n == f.RestartAfter && !s.closed {
		gen, err := s.newGeneration()
		if err != nil {
			s.log.errorf("restart after %d requests failed: %v", n, err)
		} else {
			s.restarted = true
			old, s.gen = s.gen, gen
		}
	}
	die := f.DieAfter > 0 && !s.dead && n == f.DieAfter && !s.closed
	if die {
		s.dead = true
	}
	gen := s.gen
	s.mu.Unlock()
	if old != nil {
		s.log.warnf("fault injection: server restart after %d requests; engine and metrics start again from 0", n)
		// The old engine dies like a crashed process: its in-flight
		// requests fail with ErrEngineDead.
		old.eng.Kill()
		old.eng.Close()
	}
	if die {
		s.log.errorf("fault injection: EngineCore died after %d requests (EngineDeadError); /health now answers 503", n)
		gen.eng.Kill()
	}
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
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return reqCtx },
		ErrorLog:          stdlog.New(logWriter{s.log}, "", 0),
	}
	s.log.infof("Starting vLLM server on http://%s", ln.Addr())
	s.log.infof("Available routes are: /health, /ping, /version, /metrics, /v1/models, /v1/chat/completions, /v1/completions")

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.announceStartup(stop)
	}()
	if !s.opts.DisableLogStats {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.logStats(stop, statsInterval)
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()

	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return fmt.Errorf("serve on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	s.log.infof("Shutting down")
	shutCtx, cancel := context.WithTimeout(context.Background(), s.grace)
	err := srv.Shutdown(shutCtx)
	cancel()
	if err != nil {
		// In-flight requests outlived the grace period: abort them (the
		// engine counts them as aborted) and close what is left.
		abort()
		shutCtx, cancel = context.WithTimeout(context.Background(), time.Second)
		if srv.Shutdown(shutCtx) != nil {
			_ = srv.Close()
		}
		cancel()
	}
	<-errc
	s.log.infof("Application shutdown complete.")
	return nil
}

// announceStartup logs vLLM's ready lines once --sim-startup has passed.
func (s *Server) announceStartup(stop <-chan struct{}) {
	if wait := s.opts.SimStartup - time.Since(s.created); wait > 0 {
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

// logger writes vLLM-style lines: "INFO 12-02 16:45:53 [vllm-sim] message".
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *logger) printf(level, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	msg = strings.TrimRight(msg, "\n")
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s %s [vllm-sim] %s\n", level, time.Now().Format("01-02 15:04:05"), msg)
}

// logWriter adapts logger to the standard library's log.Logger (the HTTP
// server's own messages, at WARNING).
type logWriter struct{ l *logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.l.warnf("%s", p)
	return len(p), nil
}

func (l *logger) infof(format string, a ...any)  { l.printf("INFO", format, a...) }
func (l *logger) warnf(format string, a ...any)  { l.printf("WARNING", format, a...) }
func (l *logger) errorf(format string, a ...any) { l.printf("ERROR", format, a...) }
