package engine

import (
	"math"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// simReq is a request the harness submits at offset at from the start.
type simReq struct {
	at    time.Duration
	class string
	req   Request
}

// simRec is what a client would measure for one request.
type simRec struct {
	class                string
	arrival, first, last time.Time
	tokens, outputs      int
	maxChunk             int
	reason               string
	err                  error
	cached               int
	itls                 []time.Duration
	promptLen            int
	done                 bool
}

func (r *simRec) ttft() time.Duration { return r.first.Sub(r.arrival) }
func (r *simRec) e2e() time.Duration  { return r.last.Sub(r.arrival) }
func (r *simRec) tpot() time.Duration {
	if r.tokens < 2 {
		return 0
	}
	return r.last.Sub(r.first) / time.Duration(r.tokens-1)
}

// sim is the test harness on a Simulation: it records what a client would
// measure per request; next, if set, is called when a request finishes and
// may return the client's next request (closed-loop load).
type sim struct {
	t       *testing.T
	sm      *Simulation
	e       *Engine
	clk     *simClock
	t0      time.Time
	recs    []*simRec
	next    func(done *simRec) *simReq
	maxRun  int
	steps   int
	maxWait int
}

func newSim(t *testing.T, cfg Config, reg prometheus.Registerer) *sim {
	t.Helper()
	sm, err := NewSimulation(cfg, reg)
	if err != nil {
		t.Fatalf("NewSimulation: %v", err)
	}
	s := &sim{t: t, sm: sm, e: sm.e, clk: sm.clk, t0: sm.t0}
	s.e.stepHook = func(running, waiting int) {
		s.maxRun = max(s.maxRun, running)
		s.maxWait = max(s.maxWait, waiting)
	}
	return s
}

// submit sends r now (r.at is when run's caller wanted it; the harness
// calls submit then).
func (s *sim) submit(r simReq) *simRec {
	s.t.Helper()
	rec := &simRec{class: r.class, promptLen: len(r.req.PromptTokens), arrival: s.clk.now}
	err := s.sm.Submit(r.req, func(out Output) {
		now := s.clk.now
		if out.Err != nil {
			rec.err = out.Err
		}
		if len(out.Tokens) > 0 {
			if rec.outputs == 0 {
				rec.first = now
				rec.cached = out.CachedPromptTokens
			} else {
				rec.itls = append(rec.itls, now.Sub(rec.last))
			}
			rec.outputs++
			rec.tokens += len(out.Tokens)
			rec.maxChunk = max(rec.maxChunk, len(out.Tokens))
			rec.last = now
		}
		if out.Finished {
			rec.reason, rec.done = out.FinishReason, true
			if s.next != nil {
				if nr := s.next(rec); nr != nil {
					s.submit(*nr)
				}
			}
		}
	})
	if err != nil {
		s.t.Fatalf("submit: %v", err)
	}
	s.recs = append(s.recs, rec)
	return rec
}

// run submits arrivals at their times and runs until everything finished.
func (s *sim) run(arrivals []simReq, next func(done *simRec) *simReq) time.Duration {
	s.t.Helper()
	s.next = next
	sort.SliceStable(arrivals, func(i, j int) bool { return arrivals[i].at < arrivals[j].at })
	for _, a := range arrivals {
		s.sm.At(a.at, func() { s.submit(a) })
	}
	if err := s.sm.Run(2_000_000); err != nil {
		s.t.Fatal(err)
	}
	s.steps = s.sm.Steps()
	for _, rec := range s.recs {
		if !rec.done {
			s.t.Errorf("request %q never finished", rec.class)
		}
	}
	return s.sm.Now()
}

// closedLoop runs conc clients, each sending perClient requests back to back.
func closedLoop(s *sim, conc, perClient int, mk func(client, k int) Request) time.Duration {
	left := map[string]int{}
	var arr []simReq
	for c := 0; c < conc; c++ {
		id := string(rune('A'+c%26)) + string(rune('a'+c/26))
		left[id] = perClient - 1
		arr = append(arr, simReq{class: id, req: mk(c, 0)})
	}
	ci := map[string]int{}
	for c := 0; c < conc; c++ {
		ci[string(rune('A'+c%26))+string(rune('a'+c/26))] = c
	}
	return s.run(arr, func(done *simRec) *simReq {
		if left[done.class] <= 0 {
			return nil
		}
		left[done.class]--
		k := perClient - 1 - left[done.class]
		return &simReq{class: done.class, req: mk(ci[done.class], k)}
	})
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func defaultCfg() Config {
	return Defaults(Config{EnablePrefixCaching: true, EnableChunkedPrefill: true})
}

type loadPoint struct {
	conc                    int
	thr                     float64
	p50e2e, p99e2e, p50tpot time.Duration
	p99tpot, p50ttft        time.Duration
}

func measureLoad(t *testing.T, conc int) loadPoint { return measureLoadJitter(t, conc, 0) }

// measureLoadJitter is measureLoad with step-time noise.
func measureLoadJitter(t *testing.T, conc int, jitter float64) loadPoint {
	cfg := defaultCfg()
	cfg.Jitter = jitter
	s := newSim(t, cfg, nil)
	dur := closedLoop(s, conc, 4, func(c, k int) Request {
		return Request{PromptTokens: prompt(120, c*1000+k*37+1), MaxTokens: 150, IgnoreEOS: true}
	})
	var e2e, tpot, ttft []time.Duration
	tokens := 0
	for _, r := range s.recs {
		e2e = append(e2e, r.e2e())
		tpot = append(tpot, r.tpot())
		ttft = append(ttft, r.ttft())
		tokens += r.tokens
	}
	return loadPoint{conc: conc, thr: float64(tokens) / dur.Seconds(), p50e2e: pct(e2e, 50), p99e2e: pct(e2e, 99),
		p50tpot: pct(tpot, 50), p99tpot: pct(tpot, 99), p50ttft: pct(ttft, 50)}
}

// val reads a counter or gauge.
func val(m prometheus.Metric) float64 {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		panic(err)
	}
	switch {
	case d.Counter != nil:
		return d.Counter.GetValue()
	case d.Gauge != nil:
		return d.Gauge.GetValue()
	}
	panic("val: not a counter or gauge")
}
