// Package predict says what a suite run will cost before it runs: each
// point's workload is sent to the simulator's engine (engine.Simulation)
// in simulated time, with the profile's flags and the GPU preset of the
// runner's GPU, so that an hour of load is predicted in seconds. A
// server's start-up is the measured one where an earlier run recorded it,
// else a model of it (ModelledStartup), and says which.
//
// What is predicted is the wall time the load takes on the simulated
// engine: warm-up requests one at a time, then the measured phase as
// package load sends it (closed loop, open loop with its arrivals and
// cap, a trace's arrivals, live conversations with their think time). The
// client's own costs (HTTP, scrapes, the drain poll) are not simulated:
// PointOverhead stands for them.
package predict

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/request/workload"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
	"github.com/vllmperf/vllmperf/internal/vllmsim/schemadoc"
	"github.com/vllmperf/vllmperf/internal/vllmsim/tokenizer"
	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// PointOverhead is what the harness adds to a point's load around it: the
// scrapes before and after, the drain poll, the connections opened first.
// Measured on baselines/sim.txt (quick size, 95 points in 5 profiles, 10
// runs each): the median over the points of the mean ns/op less the
// predicted warm-up and load is 0.10 s. (It was a guessed half second,
// which hid that perfgate's comparison left the warm-ups out.)
const PointOverhead = 100 * time.Millisecond

// maxSteps bounds one point's simulated engine steps.
const maxSteps = 20_000_000

// Point is one point's predicted time.
type Point struct {
	// Scenario and Key name the point (benchname's scenario and point).
	Scenario, Key string
	// Warmup is the warm-up requests' time, Measured the measured phase's
	// (what a benchmark line's ns/op reports), Requests the measured
	// requests sent (fewer than asked when Duration cut dispatch).
	Warmup, Measured time.Duration
	Requests         int
}

// Total is the point's wall time: warm-up, the measured phase and
// PointOverhead.
func (p Point) Total() time.Duration { return p.Warmup + p.Measured + PointOverhead }

// Profile is one profile's prediction for one count.
type Profile struct {
	Name string
	// GPUs is the profile's tensor-parallel size: the GPUs its server holds.
	GPUs int
	// Start is one server start; StartFrom says where it comes from
	// (Modelled, Measured, SimStartup).
	Start     time.Duration
	StartFrom string
	Points    []Point
}

// Each is one count's time: one start and every point once.
func (p Profile) Each() time.Duration {
	d := p.Start
	for _, pt := range p.Points {
		d += pt.Total()
	}
	return d
}

// Settings are what a prediction runs on.
type Settings struct {
	// Preset is the simulator's GPU preset (PresetFor).
	Preset string
	// Model replaces the profile's model when set.
	Model string
	// Size sizes the scenarios.
	Size scenario.Size
	// Seed seeds the engine's noise and the workload.
	Seed uint64
	// Simulator predicts a run on the simulator itself (in process or its
	// image): its start is its --sim-startup, not a vLLM server's.
	Simulator bool
}

// Where a start's time comes from.
const (
	// Modelled is ModelledStartup: no start was measured on the key.
	Modelled = "modelled (no start measured on this key)"
	// Measured is an earlier run's ready time on the key.
	Measured = "measured on this key"
	// SimStartup is the simulator's --sim-startup.
	SimStartup = "the simulator's --sim-startup"
)

// PredictProfile predicts p's points of scenarios at s.Size on s.Preset.
// The start-up is ModelledStartup, or the simulator's --sim-startup with
// s.Simulator (the caller replaces it with a measured one where it has
// one).
func PredictProfile(p profile.Profile, scenarios []*scenario.Scenario, s Settings) (Profile, error) {
	p = p.WithModel(s.Model)
	args := append([]string{p.Model}, p.SimArgs()...)
	args = slices.Concat(args, cliarg.SimGPU.With(s.Preset), cliarg.SimSeed.With(fmt.Sprint(s.Seed)))
	opts, err := config.ParseArgs(args)
	if err != nil {
		return Profile{}, fmt.Errorf("predict profile %s on %s: %w", p.Name, s.Preset, err)
	}
	cfg := opts.Config
	out := Profile{Name: p.Name, GPUs: max(cfg.TensorParallelSize, 1)}
	gpu, ok := presets.LookupGPU(s.Preset)
	if !ok {
		return Profile{}, fmt.Errorf("predict: no GPU preset %q (the presets: %s)", s.Preset, strings.Join(presets.GPUPresetNames(), ", "))
	}
	model, _ := presets.LookupModel(p.Model)
	out.Start, out.StartFrom = ModelledStartup(gpu, model, out.GPUs), Modelled
	if s.Simulator {
		out.Start, out.StartFrom = opts.Startup, SimStartup
	}
	warm := cfg
	for _, sc := range scenarios {
		for _, pt := range sc.Points(s.Size) {
			// A fresh engine per point, warm but for the first point after
			// the start (the server's first step pays the cold start).
			c := warm
			if len(out.Points) > 0 {
				c.ColdStart = 0
			}
			got, err := PredictPoint(c, p.ServedName(), pt, s.Seed)
			if err != nil {
				return Profile{}, fmt.Errorf("predict %s/%s/%s: %w", p.Name, sc.Name, pt.Key, err)
			}
			out.Points = append(out.Points, got)
		}
	}
	return out, nil
}

// PredictPoint runs pt's workload against an engine of cfg in simulated
// time and returns its predicted time.
func PredictPoint(cfg engine.Config, model string, pt scenario.Point, seed uint64) (Point, error) {
	sm, err := engine.NewSimulation(cfg, nil)
	if err != nil {
		return Point{}, err
	}
	mix, err := workload.NewMix(model, seed, 1, pt.Classes)
	if err != nil {
		return Point{}, err
	}
	c := &client{sm: sm, mix: mix, cfg: pt.Load, tok: tokenizer.NewTokenizer(sm.Info().VocabSize), turns: max(mix.Turns(), 1)}
	if err := c.prepare(seed); err != nil {
		return Point{}, err
	}
	c.startWarmup()
	if err := sm.Run(maxSteps); err != nil {
		return Point{}, err
	}
	if c.failed != nil {
		return Point{}, c.failed
	}
	return Point{Scenario: pt.Scenario.Name, Key: pt.Key, Warmup: c.measuredAt, Measured: c.end - c.measuredAt, Requests: c.sent}, nil
}

// client sends a point's requests to a Simulation as package load would.
type client struct {
	sm    *engine.Simulation
	mix   *workload.Mix
	cfg   load.Config
	tok   tokenizer.Tokenizer
	turns int // requests a dispatched unit holds (a live conversation's turns)

	arrivals   []time.Duration // measured units' due times (open loop), from measuredAt
	units      int             // measured units to dispatch (-1: until Duration)
	warmDone   int
	measuredAt time.Duration // when the measured phase began
	dispatched int           // measured units dispatched
	inFlight   int           // units in flight
	held       int           // open-loop arrivals waiting for MaxConcurrency
	sent       int           // measured requests sent
	end        time.Duration // the last measured request's end
	failed     error
}

// prepare works out the measured phase's schedule.
func (c *client) prepare(seed uint64) error {
	l := c.cfg
	c.units = l.Requests
	if c.units == 0 {
		c.units = -1
	}
	switch {
	case len(l.Arrivals) > 0:
		c.arrivals = l.Arrivals
		if c.units < 0 || c.units > len(l.Arrivals) {
			c.units = len(l.Arrivals)
		}
	case l.Rate > 0:
		if c.units < 0 && l.Duration <= 0 {
			return errors.New("an open-loop point needs Requests or Duration")
		}
		b := l.Burstiness
		if b == 0 {
			b = load.DefaultBurstiness
		}
		p, err := load.NewPacer(l.Rate, b, seed)
		if err != nil {
			return err
		}
		n := c.units
		if n < 0 { // bounded by Duration: as many as arrive in it
			n = int(math.Ceil(l.Rate*l.Duration.Seconds()*2)) + 16
		}
		for i := range n {
			at, _ := p.Arrival(i)
			c.arrivals = append(c.arrivals, at)
		}
	case l.Ramp != nil:
		if c.units < 0 {
			return errors.New("a ramp-up point needs Requests: it climbs over them")
		}
		b := l.Burstiness
		if b == 0 {
			b = load.DefaultBurstiness
		}
		p, err := load.NewRampPacer(*l.Ramp, c.units, b, seed)
		if err != nil {
			return err
		}
		for i := range c.units {
			at, _ := p.Arrival(i)
			c.arrivals = append(c.arrivals, at)
		}
	case l.Concurrency <= 0:
		return errors.New("a point needs a concurrency, a rate, a ramp or a trace's arrivals")
	}
	return nil
}

// request builds request i of the mix as the engine sees it.
func (c *client) request(i int) engine.Request {
	r := c.mix.Next(i)
	var prompt []int32
	prompt = append(prompt, c.tok.Tokenize(r.System)...)
	for _, t := range r.History {
		prompt = append(prompt, c.tok.Tokenize(t.User)...)
		prompt = append(prompt, c.tok.Tokenize(t.Assistant)...)
	}
	prompt = append(prompt, c.tok.Tokenize(r.Prompt)...)
	req := engine.Request{PromptTokens: prompt, MaxTokens: r.MaxTokens, MinTokens: r.MinTokens,
		IgnoreEOS: r.IgnoreEOS, Greedy: r.Temperature == 0, Chat: r.Endpoint != openai.Completions}
	if r.Schema != nil { // it ends with its document, as the simulator builds it
		n, err := schemadoc.GuidedTokens(r.Schema.Raw(), r.Prompt)
		if err != nil && c.failed == nil {
			c.failed = fmt.Errorf("request %d's schema: %w", i, err)
		}
		req.Guided, req.StopAfter, req.IgnoreEOS = true, n, false
	}
	return req
}

// startWarmup sends the warm-up units one at a time, then the measured
// phase.
func (c *client) startWarmup() {
	if c.warmDone >= c.cfg.Warmup {
		c.startMeasured()
		return
	}
	u := c.warmDone
	c.sendUnit(-1-u, 0, func() {
		c.warmDone++
		c.startWarmup()
	})
}

// startMeasured begins the measured phase at the simulated now.
func (c *client) startMeasured() {
	c.measuredAt = c.sm.Now()
	if c.arrivals == nil { // closed loop: Concurrency workers
		for range c.cfg.Concurrency {
			c.nextClosed()
		}
		return
	}
	for i, at := range c.arrivals {
		if c.units >= 0 && i >= c.units {
			break
		}
		if c.cfg.Duration > 0 && at >= c.cfg.Duration {
			break
		}
		c.sm.At(c.measuredAt+at, c.dispatchOpen)
	}
}

// open reports whether dispatch may go on.
func (c *client) open() bool {
	if c.units >= 0 && c.dispatched >= c.units {
		return false
	}
	return c.cfg.Duration <= 0 || c.sm.Now()-c.measuredAt < c.cfg.Duration
}

// nextClosed sends the next unit of a closed loop, if any is left.
func (c *client) nextClosed() {
	if !c.open() {
		return
	}
	u := c.dispatched
	c.dispatched++
	c.sendUnit(u, 0, c.nextClosed)
}

// dispatchOpen sends an arrival now, or holds it while MaxConcurrency
// units are in flight (client queue time).
func (c *client) dispatchOpen() {
	if !c.open() {
		return
	}
	if c.cfg.MaxConcurrency > 0 && c.inFlight >= c.cfg.MaxConcurrency {
		c.held++
		return
	}
	c.sendOpen()
}

// sendOpen sends the next open-loop unit; when it ends, a held arrival
// takes its slot.
func (c *client) sendOpen() {
	u := c.dispatched
	c.dispatched++
	c.sendUnit(u, 0, func() {
		if c.held > 0 && c.open() {
			c.held--
			c.sendOpen()
		}
	})
}

// sendUnit sends turn t of unit u (u < 0: warm-up unit −u−1), the later
// turns ThinkTime after each reply, and calls done when its last turn
// ends.
func (c *client) sendUnit(u, t int, done func()) {
	if t == 0 {
		c.inFlight++
	}
	idx := -1
	if u >= 0 {
		idx = u*c.turns + t
		c.sent++
	} else {
		idx = (-1-u)*c.turns + t + 1_000_000 // warm-up requests are other requests
	}
	err := c.sm.Submit(c.request(idx), func(out engine.Output) {
		if out.Err != nil && c.failed == nil {
			c.failed = out.Err
		}
		if !out.Finished {
			return
		}
		if u >= 0 {
			c.end = max(c.end, c.sm.Now())
		}
		if t+1 < c.turns {
			c.sm.At(c.sm.Now()+c.cfg.ThinkTime, func() { c.sendUnit(u, t+1, done) })
			return
		}
		c.inFlight--
		done()
	})
	if err != nil && c.failed == nil {
		c.failed = fmt.Errorf("request %d: %w", idx, err)
	}
}
