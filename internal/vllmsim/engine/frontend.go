package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// frontend is vLLM's API server in front of the engine core
// (FrontendPreset): --api-server-count processes, each one asyncio event
// loop, a single CPU that runs whatever is ready in the order it became
// ready. A request is handled by one process (round robin, as the
// processes' shared listening socket spreads connections). Its input work
// (HTTP, chat template, tokenization) runs in InputAwaits slices: after
// each slice the request awaits and goes to the back of its loop's ready
// queue, behind the output work of the streams that are open, so input
// work stretches with the number of open streams instead of running one
// request at a time. Every token the engine emits costs its request's
// loop PerOutputToken (detokenization, the SSE chunk), queued when the
// step ends. Once its last slice is done and Latency has passed, the
// request enters the engine's waiting queue. Guarded by the engine's lock.
type frontend struct {
	p       presets.FrontendPreset
	on      bool // requests go through it (an active preset, not Offline)
	loops   []evLoop
	next    int    // the process the next request goes to
	reqs    []*seq // requests in the front end, in arrival order
	emitted []int  // tokens emitted per loop since the last flush
	noise   noise
}

// evLoop is one API server process's event loop: a FIFO queue of work,
// run one job at a time.
type evLoop struct {
	free  time.Time // when the job at the head started or will start
	queue []feJob
}

// feJob is one slice of work on a loop: a slice of a request's input
// work (s set), or the output work of a step's tokens (s nil).
type feJob struct {
	s    *seq
	work time.Duration
}

// frontendStream is the PCG stream of the front end's noise generator
// (seeded by Config.Seed), apart from jitterStream and requestStream.
const frontendStream = 0x2545f4914f6cdd1d

// frontendNoiseScale is the front end's relative noise per unit of
// Config.Jitter: Python request handling (GC pauses, the event loop) varies
// more than GPU steps do.
const frontendNoiseScale = 2

func newFrontend(p presets.FrontendPreset, processes int, jitter float64, seed int64) *frontend {
	n := max(1, processes)
	return &frontend{
		p:       p,
		loops:   make([]evLoop, n),
		emitted: make([]int, n),
		noise:   noise{rng: rand.New(rand.NewPCG(uint64(seed), frontendStream)), sd: jitter * frontendNoiseScale},
	}
}

// active reports whether the front end costs anything.
func (f *frontend) active() bool {
	return f.p.Latency > 0 || f.p.Base > 0 || f.p.ChatRequest > 0 || f.p.ChatRequest011 > 0 || f.p.PerPromptToken > 0 || f.p.PerOutputToken > 0
}

// awaits is the number of slices a request's input work runs in.
func (f *frontend) awaits() int { return max(1, f.p.InputAwaits) }

// admit takes a request arriving at its arrival time: it joins its loop's
// queue with the first slice of its input work.
func (f *frontend) admit(s *seq) {
	f.advance(s.arrival)
	work := f.noise.lognormal(f.p.InputWork(s.req.Chat, s.promptLen))
	s.fe = feState{loop: f.next, slice: work / time.Duration(f.awaits()), left: f.awaits(),
		latency: f.noise.lognormal(f.p.Latency)}
	f.next = (f.next + 1) % len(f.loops)
	f.reqs = append(f.reqs, s)
	f.push(s.fe.loop, feJob{s: s, work: s.fe.slice}, s.arrival)
}

// push appends a job to loop i's queue at time at.
func (f *frontend) push(i int, j feJob, at time.Time) {
	l := &f.loops[i]
	if len(l.queue) == 0 && l.free.Before(at) {
		l.free = at
	}
	l.queue = append(l.queue, j)
}

// advance runs every loop's jobs that end by now; a request whose input
// slice ends goes to the back of the queue with its next slice, or, after
// its last, is ready for the engine Latency later (seq.readyAt).
func (f *frontend) advance(now time.Time) {
	for i := range f.loops {
		l := &f.loops[i]
		for len(l.queue) > 0 {
			j := l.queue[0]
			end := l.free.Add(j.work)
			if end.After(now) {
				break
			}
			l.queue = l.queue[1:]
			l.free = end
			if s := j.s; s != nil && !s.done {
				s.fe.left--
				if s.fe.left > 0 {
					l.queue = append(l.queue, feJob{s: s, work: s.fe.slice})
				} else {
					s.readyAt = end.Add(s.fe.latency)
				}
			}
		}
		if len(l.queue) == 0 && l.free.Before(now) {
			l.free = now
		}
	}
}

// output records n tokens emitted for s; flush queues their work.
func (f *frontend) output(s *seq, n int) {
	if f.on && n > 0 {
		f.emitted[s.fe.loop] += n
	}
}

// flush queues the output work of the tokens recorded since the last
// flush, on each loop, at now (the step's end).
func (f *frontend) flush(now time.Time) {
	if !f.on || f.p.PerOutputToken <= 0 {
		clear(f.emitted)
		return
	}
	f.advance(now)
	for i, n := range f.emitted {
		if n > 0 {
			f.push(i, feJob{work: f.noise.lognormal(time.Duration(n) * f.p.PerOutputToken)}, now)
			f.emitted[i] = 0
		}
	}
}

// ready removes and returns the requests whose input work is done and
// whose latency has passed by now, in the order they became ready.
func (f *frontend) ready(now time.Time) []*seq {
	f.advance(now)
	var out []*seq
	f.reqs = slices.DeleteFunc(f.reqs, func(s *seq) bool {
		if s.fe.left == 0 && !s.readyAt.After(now) {
			out = append(out, s)
			return true
		}
		return false
	})
	slices.SortStableFunc(out, func(a, b *seq) int { return a.readyAt.Compare(b.readyAt) })
	return out
}

// nextReady is the earliest time a request may leave the front end (zero:
// none is in it): the earliest readyAt of the requests done with their
// input work, or the end of a job at the head of a loop that holds input
// work. It is a lower bound: ready at that time says what really left.
func (f *frontend) nextReady() time.Time {
	var t time.Time
	earlier := func(x time.Time) {
		if t.IsZero() || x.Before(t) {
			t = x
		}
	}
	for _, s := range f.reqs {
		if s.fe.left == 0 {
			earlier(s.readyAt)
		}
	}
	for i := range f.loops {
		l := &f.loops[i]
		if slices.ContainsFunc(l.queue, func(j feJob) bool { return j.s != nil && !j.s.done }) {
			earlier(l.free.Add(l.queue[0].work))
		}
	}
	return t
}

// drop removes s from the front end, if it is there (its queued slices
// are skipped when they come up).
func (f *frontend) drop(s *seq) {
	if i := slices.Index(f.reqs, s); i >= 0 {
		f.reqs = slices.Delete(f.reqs, i, i+1)
	}
	for i := range f.loops {
		l := &f.loops[i]
		if len(l.queue) > 1 {
			l.queue = append(l.queue[:1], slices.DeleteFunc(l.queue[1:], func(j feJob) bool { return j.s == s })...)
		}
	}
}

// feState is a request's progress through the front end.
type feState struct {
	loop    int           // the API server process handling it
	slice   time.Duration // one slice of its input work
	left    int           // input slices still to run (0: done)
	latency time.Duration // its Latency draw
}

// noise draws seeded multiplicative noise with relative standard deviation
// sd (0: none).
type noise struct {
	rng *rand.Rand
	sd  float64
}

// lognormal multiplies d by a log-normal factor of median 1 and log
// standard deviation sd: never negative, with a right tail, as service
// times are.
func (n noise) lognormal(d time.Duration) time.Duration {
	if n.sd <= 0 || d <= 0 {
		return d
	}
	return time.Duration(float64(d) * math.Exp(n.sd*n.rng.NormFloat64()))
}
