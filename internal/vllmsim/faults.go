package vllmsim

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/vllmperf/vllmperf/internal/suggest"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// Every fault vllm-sim injects lives in this file:
//
//   - per request, drawn by faultInjector: a 500 or 429 answer instead of
//     running the request, a connection cut mid-response, a stream that
//     stalls once (outputStream, the wrapper around the engine's output
//     channel), and usage.completion_tokens reported off by a fixed skew;
//   - on /metrics: a delay, broken exposition text, families left out;
//   - on the server's life: a restart (fresh engine and counters) or the
//     engine's death after N finished requests (Server.requestFinished).

// faultStream is the PCG stream of the fault generator (seeded by
// --sim-seed): "vllm-sim" in ASCII, a constant apart from the engine's
// streams so that faults never share a sequence with tokens or jitter.
const faultStream = 0x766c6c6d2d73696d

// faultInjector draws the per-request faults from a generator seeded by
// --sim-seed, so that the same seed and the same request order give the same
// faults.
type faultInjector struct {
	opts config.FaultOptions
	mu   sync.Mutex
	rng  *rand.Rand
}

// requestFaults are the faults chosen for one request.
type requestFaults struct {
	// status is 500 or 429 for a request answered with that error without
	// running, else 0.
	status int
	// disconnectAt is how many engine outputs go out before the connection
	// is cut (0: never). A response that ends earlier is cut before its last
	// output.
	disconnectAt int
	// stallAt is the 1-based token before whose output the stream pauses
	// for stallFor, or before the last output when the request ends
	// sooner (0: never). Counted in tokens, not outputs: the engine merges
	// the outputs of a slow reader, so an output count may never be reached.
	stallAt  int
	stallFor time.Duration
	// usageSkew is added to the completion tokens usage reports.
	usageSkew int
}

func newFaultInjector(seed int64, opts config.FaultOptions) *faultInjector {
	return &faultInjector{opts: opts, rng: rand.New(rand.NewPCG(uint64(seed), faultStream))}
}

// draw picks one request's faults. maxOutputs bounds where a mid-stream
// fault lands: uniformly in the first half of the expected outputs. The
// generator is consulted the same number of times for every request, so
// one request's draw never shifts another's.
func (f *faultInjector) draw(maxOutputs int) requestFaults {
	f.mu.Lock()
	defer f.mu.Unlock()
	half := max(1, maxOutputs/2)
	uStatus, uDisc, uStall := f.rng.Float64(), f.rng.Float64(), f.rng.Float64()
	discAt, stallAt := 1+f.rng.IntN(half), 1+f.rng.IntN(half)
	rf := requestFaults{stallFor: f.opts.Stall, usageSkew: f.opts.UsageSkew}
	switch {
	case uStatus < f.opts.Rate500:
		rf.status = http.StatusInternalServerError
	case uStatus < f.opts.Rate500+f.opts.Rate429:
		rf.status = http.StatusTooManyRequests
	}
	if uDisc < f.opts.DisconnectRate {
		rf.disconnectAt = discAt
	}
	if uStall < f.opts.StallRate {
		rf.stallAt = stallAt
	}
	return rf
}

// reject answers the request with the drawn 500 or 429 and reports whether
// it did.
func (rf requestFaults) reject(w http.ResponseWriter) bool {
	switch rf.status {
	case http.StatusInternalServerError:
		writeError(w, rf.status, "InternalServerError", "", "Internal Server Error (injected by --sim-fault-500-rate)")
	case http.StatusTooManyRequests:
		writeError(w, rf.status, "RateLimitError", "", "Too Many Requests (injected by --sim-fault-429-rate)")
	default:
		return false
	}
	return true
}

// reportedCompletion is the completion_tokens usage reports for n tokens
// generated: n, skewed by --sim-fault-usage-skew, never below 0.
func (rf requestFaults) reportedCompletion(n int) int { return max(0, n+rf.usageSkew) }

// streamStep says what outputStream.next found.
type streamStep int

const (
	stepOutput streamStep = iota // an engine output
	stepOver                     // the engine closed the request's channel
	stepCut                      // the disconnect fault cut the connection
)

// outputStream is one request's engine outputs with its faults applied: a
// stall pauses it once, a disconnect cuts the connection. It counts the
// request toward the restart and die faults (finished) once, when the last
// output is taken or at close, whichever comes first.
type outputStream struct {
	ch       <-chan engine.Output
	ctx      context.Context
	cancel   context.CancelFunc
	w        http.ResponseWriter
	faults   requestFaults
	finished func() bool

	pending []engine.Output // outputs read during a stall
	taken   int             // outputs taken so far
	tokens  int             // tokens of the outputs taken so far
	stalled bool            // the stall fault has paused the stream
	counted bool
}

// next returns the next engine output, pausing first when the stall fault
// is due, and cutting the connection when the disconnect fault is.
func (s *outputStream) next() (engine.Output, streamStep) {
	var out engine.Output
	if len(s.pending) > 0 {
		out, s.pending = s.pending[0], s.pending[1:]
	} else {
		var ok bool
		if out, ok = <-s.ch; !ok {
			return out, stepOver
		}
	}
	if at := s.faults.stallAt; at > 0 && !s.stalled && (s.tokens+len(out.Tokens) >= at || out.Finished) {
		s.stalled = true
		s.stall()
	}
	s.tokens += len(out.Tokens)
	s.taken++
	if out.Finished && !s.count() {
		// The engine died on an earlier request's count while this one
		// finished in the same step: it fails as the rest in flight do.
		out = engine.Output{Finished: true, Err: engine.ErrEngineDead}
	}
	// Cut once disconnectAt outputs have gone out, or before the last one,
	// whichever comes first.
	if at := s.faults.disconnectAt; at > 0 && (s.taken > at || out.Finished) {
		s.cut()
		return out, stepCut
	}
	return out, stepOutput
}

// stall pauses the response for --sim-fault-stall while the engine goes on,
// before the output in hand: outputs that arrive meanwhile are kept and
// sent after it.
func (s *outputStream) stall() {
	t := time.NewTimer(s.faults.stallFor)
	defer t.Stop()
	ch := s.ch
	for {
		select {
		case out, ok := <-ch:
			if !ok {
				ch = nil // closed: wait out the pause on the timer alone
				continue
			}
			s.pending = append(s.pending, out)
		case <-t.C:
			return
		case <-s.ctx.Done():
			return
		}
	}
}

// cut aborts the engine request and drops the connection without ending
// the response, as a crashed proxy or server would.
func (s *outputStream) cut() {
	s.cancel()
	if conn, _, err := http.NewResponseController(s.w).Hijack(); err == nil {
		_ = conn.Close()
		return
	}
	// A writer that cannot be hijacked (HTTP/2, a recorder): the response
	// just ends here, still without finish_reason, usage or [DONE].
}

// canceled reports whether the request's context ended (the client left).
func (s *outputStream) canceled() bool { return s.ctx.Err() != nil }

// close ends the request: the engine's contract closes ch after the
// finished output, so drain whatever a cut connection left unread (the
// engine never waits on this request), and count the request once.
func (s *outputStream) close() {
	s.cancel()
	for range s.ch {
	}
	s.count()
}

// count counts the request once; it reports false when the engine had
// already died (--sim-fault-die-after) before this request ended.
func (s *outputStream) count() bool {
	if s.counted {
		return true
	}
	s.counted = true
	return s.finished()
}

// requestFinished counts one request that reached the engine and ended, and
// runs the restart and die faults when their count is reached. It runs
// before the request's last bytes are written, so a client that has read
// the whole response sees the effect. It reports false for a request that
// ended after the engine died: with --sim-fault-die-after N exactly N
// requests complete, even when others finish in the same engine step.
func (s *Server) requestFinished() bool {
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
	alive := !s.dead
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
	return alive
}

// waitMetricsDelay holds /metrics back for --sim-fault-metrics-delay and
// reports false if the client left meanwhile.
func (s *Server) waitMetricsDelay(ctx context.Context) bool {
	d := s.opts.Faults.MetricsDelay
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// dropMetrics is the registry with the --sim-fault-drop-metric families
// left out. A name that matches no family is an *ArgError with the closest
// family's name.
func dropMetrics(reg prometheus.Gatherer, names []string) (prometheus.Gatherer, error) {
	if len(names) == 0 {
		return reg, nil
	}
	mfs, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	var families []string
	for _, mf := range mfs {
		families = append(families, mf.GetName())
	}
	for _, n := range names {
		if !slices.Contains(families, n) {
			hint := ""
			if c := suggest.Closest(n, families); c != "" {
				hint = "did you mean " + c + "? "
			}
			return nil, config.ArgErrorf("argument --sim-fault-drop-metric: no metric family %q (%sthe families are those /metrics shows, e.g. vllm:kv_cache_usage_perc, vllm:prompt_tokens_total, vllm:time_to_first_token_seconds)", n, hint)
		}
	}
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := reg.Gather()
		return slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool { return slices.Contains(names, mf.GetName()) }), err
	}), nil
}

// writeBrokenMetrics emits the real exposition with damage a scraper must
// detect (--sim-fault-metrics-malformed): an unterminated label set first,
// then a sample line cut short.
func writeBrokenMetrics(w http.ResponseWriter, gather prometheus.Gatherer, modelName string) {
	var buf bytes.Buffer
	mfs, err := gather.Gather()
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
	fmt.Fprintf(w, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n")
	fmt.Fprintf(w, "# TYPE vllm:num_requests_running gauge\n")
	fmt.Fprintf(w, "vllm:num_requests_running{model_name=\"%s\",engine=\"0\" 1\n", modelName)
	text := buf.String()
	if i := strings.LastIndex(text, "\n"); i > 0 {
		// Drop the value of the last sample: "name{...}" with no number.
		if j := strings.LastIndexAny(text[:i], " "); j > 0 {
			text = text[:j] + "\n"
		}
	}
	_, _ = w.Write([]byte(text))
}
