package engine

import (
	"container/heap"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Simulation runs an Engine in simulated time: no goroutine and no waiting,
// the clock jumps from one event to the next (a step's end, a request
// leaving the front end, a client's next request). The same scheduler,
// timing model, front end and noise run as in real time, so a replay of a
// benchmark that would take an hour takes seconds, and two runs with the
// same seed are identical. A Simulation is not safe for concurrent use.
type Simulation struct {
	e      *Engine
	clk    *simClock
	t0     time.Time
	events eventQueue
	outs   []delivery // outputs of the step just applied, delivered after it
	steps  int
	peaks  Peaks
	seqSum int // Σ sequences per step, for Peaks.MeanRunning
}

// Peaks is what a Simulation's engine went through: the most requests
// running, waiting in the engine and in the front end at once, and the mean
// number of sequences per step.
type Peaks struct {
	Running, Waiting, Frontend int
	MeanRunning                float64
}

// Peaks reports the run so far.
func (s *Simulation) Peaks() Peaks {
	p := s.peaks
	if s.steps > 0 {
		p.MeanRunning = float64(s.seqSum) / float64(s.steps)
	}
	return p
}

// observe records the engine's state after a scheduling decision (under mu).
func (s *Simulation) observe(p plan) {
	e := s.e
	s.peaks.Running = max(s.peaks.Running, len(e.running))
	s.peaks.Waiting = max(s.peaks.Waiting, len(e.waiting))
	s.peaks.Frontend = max(s.peaks.Frontend, len(e.fe.reqs))
	s.seqSum += len(p.items)
}

// simClock is a Simulation's clock: only the Simulation moves it.
type simClock struct{ now time.Time }

func (c *simClock) Now() time.Time { return c.now }
func (c *simClock) AfterFunc(time.Time, func()) func() bool {
	panic("engine: a Simulation's engine never waits on its clock")
}

// delivery is one output on its way to a client.
type delivery struct {
	out  Output
	sink func(Output)
}

// simStart is a Simulation's time zero (any fixed instant would do).
var simStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// NewSimulation validates cfg (its Clock is replaced) and builds an engine
// driven in simulated time; its metrics are registered on reg (nil: none).
// Fixed-timing configurations are refused (they need no simulation).
func NewSimulation(cfg Config, reg prometheus.Registerer) (*Simulation, error) {
	clk := &simClock{now: simStart}
	cfg.Clock = clk
	e, err := build(cfg, reg)
	if err != nil {
		return nil, err
	}
	return &Simulation{e: e, clk: clk, t0: simStart}, nil
}

// Info describes the simulated engine.
func (s *Simulation) Info() Info { return s.e.Info() }

// Now is the simulated time since the start.
func (s *Simulation) Now() time.Duration { return s.clk.now.Sub(s.t0) }

// Steps is the number of engine steps run so far.
func (s *Simulation) Steps() int { return s.steps }

// At runs f at simulated time t (now, if t is past). Events at the same time
// run in the order they were added. f may call Submit and At.
func (s *Simulation) At(t time.Duration, f func()) {
	heap.Push(&s.events, event{at: s.t0.Add(max(t, s.Now())), seq: s.events.next, f: f})
	s.events.next++
}

// Submit sends req now (its Arrival is set to the simulated time). Each of
// its outputs is passed to sink once the step that made it has ended, with
// Now at that step's end; sink may call Submit and At. A request the
// engine refuses returns its *RequestError.
func (s *Simulation) Submit(req Request, sink func(Output)) error {
	req.Arrival = s.clk.now
	_, err := s.e.submit(req, func(out Output) { s.outs = append(s.outs, delivery{out, sink}) })
	return err
}

// ErrSimulationTooLong is returned by Run when the step limit is reached.
var ErrSimulationTooLong = errors.New("simulation step limit reached")

// Run runs the simulation until no request and no event is left, or until
// maxSteps engine steps have run (then it returns ErrSimulationTooLong).
func (s *Simulation) Run(maxSteps int) error {
	e := s.e
	for {
		s.fireUntil(s.clk.now, true)
		e.mu.Lock()
		p := e.schedule()
		if len(p.items) == 0 {
			next := e.fe.nextReady()
			e.mu.Unlock()
			s.deliver()
			if p.preempted {
				continue
			}
			if len(s.events.q) > 0 && (next.IsZero() || s.events.q[0].at.Before(next)) {
				next = s.events.q[0].at
			}
			if next.IsZero() {
				return nil
			}
			s.clk.now = next
			continue
		}
		s.observe(p)
		end := s.clk.now.Add(e.stepTime(p))
		e.mu.Unlock()
		s.fireUntil(end, false) // clients act while the step runs
		s.clk.now = end
		e.mu.Lock()
		e.apply(p, end)
		e.mu.Unlock()
		s.deliver()
		s.steps++
		if s.steps >= maxSteps {
			return fmt.Errorf("%w: %d steps at %v simulated", ErrSimulationTooLong, s.steps, s.Now())
		}
	}
}

// fireUntil runs the events due before t (at t too, if inclusive), each
// with the clock at its own time.
func (s *Simulation) fireUntil(t time.Time, inclusive bool) {
	for len(s.events.q) > 0 {
		ev := s.events.q[0]
		if ev.at.After(t) || (!inclusive && ev.at.Equal(t)) {
			return
		}
		heap.Pop(&s.events)
		s.clk.now = ev.at
		ev.f()
	}
}

// deliver passes the outputs of the last step to their clients.
func (s *Simulation) deliver() {
	// A sink may not add outputs (the engine emits only in a step), but the
	// loop reads the length each time, so one added would still be sent.
	for i := 0; i < len(s.outs); i++ {
		s.outs[i].sink(s.outs[i].out)
	}
	clear(s.outs)
	s.outs = s.outs[:0]
}

// event is a client's action at a simulated time.
type event struct {
	at  time.Time
	seq int
	f   func()
}

// eventQueue orders events by time, then by the order they were added.
type eventQueue struct {
	q    []event
	next int
}

func (h *eventQueue) Len() int { return len(h.q) }
func (h *eventQueue) Less(i, j int) bool {
	if !h.q[i].at.Equal(h.q[j].at) {
		return h.q[i].at.Before(h.q[j].at)
	}
	return h.q[i].seq < h.q[j].seq
}
func (h *eventQueue) Swap(i, j int) { h.q[i], h.q[j] = h.q[j], h.q[i] }
func (h *eventQueue) Push(x any)    { h.q = append(h.q, x.(event)) }
func (h *eventQueue) Pop() any {
	x := h.q[len(h.q)-1]
	h.q = h.q[:len(h.q)-1]
	return x
}
