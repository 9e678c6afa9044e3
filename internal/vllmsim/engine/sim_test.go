package engine

import (
	"math"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// vclock is a virtual clock for the synchronous simulation harness: the
// harness, not a goroutine, advances it step by step.
type vclock struct{ now time.Time }

func (c *vclock) Now() time.Time { return c.now }
func (c *vclock) AfterFunc(time.Time, func()) func() bool {
	panic("vclock: the synchronous harness never waits")
}

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
}

func (r *simRec) ttft() time.Duration { return r.first.Sub(r.arrival) }
func (r *simRec) e2e() time.Duration  { return r.last.Sub(r.arrival) }
func (r *simRec) tpot() time.Duration {
	if r.tokens < 2 {
		return 0
	}
	return r.last.Sub(r.first) / time.Duration(r.tokens-1)
}

// sim drives an engine built with a vclock synchronously: schedule a step,
// advance virtual time by the timing model's duration, apply it. next, if
// set, is called when a request finishes and may return the client's next
// request (closed-loop load).
type sim struct {
	t       *testing.T
	e       *Engine
	clk     *vclock
	t0      time.Time
	recs    []*simRec
	maxRun  int
	steps   int
	maxWait int
}

func newSim(t *testing.T, cfg Config, reg prometheus.Registerer) *sim {
	t.Helper()
	clk := &vclock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	cfg.Clock = clk
	e, err := build(cfg, reg)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	s := &sim{t: t, e: e, clk: clk, t0: clk.now}
	e.stepHook = func(running, waiting int) {
		s.maxRun = max(s.maxRun, running)
		s.maxWait = max(s.maxWait, waiting)
	}
	return s
}

func (s *sim) submit(r simReq) *simRec {
	s.t.Helper()
	rec := &simRec{class: r.class, promptLen: len(r.req.PromptTokens)}
	r.req.Arrival = s.t0.Add(r.at)
	rec.arrival = r.req.Arrival
	_, err := s.e.submit(r.req, func(out Output) {
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
			rec.reason = out.FinishReason
		}
	})
	if err != nil {
		s.t.Fatalf("submit: %v", err)
	}
	s.recs = append(s.recs, rec)
	return rec
}

// run submits arrivals (sorted by at) and steps until everything finished.
func (s *sim) run(arrivals []simReq, next func(done *simRec) *simReq) time.Duration {
	s.t.Helper()
	sort.SliceStable(arrivals, func(i, j int) bool { return arrivals[i].at < arrivals[j].at })
	pending := arrivals
	open := map[*simRec]bool{}
	for {
		now := s.clk.now.Sub(s.t0)
		for len(pending) > 0 && pending[0].at <= now {
			open[s.submit(pending[0])] = true
			pending = pending[1:]
		}
		s.e.mu.Lock()
		p := s.e.schedule()
		if len(p.items) == 0 {
			s.e.mu.Unlock()
			if p.preempted {
				continue
			}
			if len(pending) == 0 {
				break
			}
			s.clk.now = s.t0.Add(pending[0].at)
			continue
		}
		d := s.e.stepTime(p)
		s.clk.now = s.clk.now.Add(d)
		s.e.apply(p, s.clk.now)
		s.e.mu.Unlock()
		s.steps++
		if s.steps > 2_000_000 {
			s.t.Fatal("simulation did not finish")
		}
		for rec := range open {
			if rec.reason != "" || rec.err != nil {
				delete(open, rec)
				if next != nil {
					if nr := next(rec); nr != nil {
						nr.at = s.clk.now.Sub(s.t0)
						pending = append([]simReq{*nr}, pending...)
					}
				}
			}
		}
	}
	for rec := range open {
		s.t.Errorf("request %q never finished", rec.class)
	}
	return s.clk.now.Sub(s.t0)
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

func measureLoad(t *testing.T, conc int) loadPoint {
	s := newSim(t, defaultCfg(), nil)
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
