// Package overload tells, while an open-loop run is still going, a server
// that cannot keep up with the offered load from one that is merely busy:
// it watches the run's queue and its time to first token and returns a
// Verdict as soon as both grow with no sign of levelling.
//
// The rule (Rule, DefaultRule) over the last Window of observations, one
// every Interval, all of which must hold:
//
//  1. The queue (the requests in flight plus the arrivals due but not yet
//     sent) has a least-squares slope of at least MinGrowth requests/s,
//     MinT or more standard errors above zero.
//  2. It has not levelled: the slope over the window's later half is at
//     least half the whole window's.
//  3. The queue ends the window at MinQueue requests or more, and the
//     server's throughput has stopped climbing short of the offered
//     rate: the requests completed per second over the window's later
//     half stay below (1 − MinGrowthShare) of the offered rate and at
//     most 1.25 × the first half's + 0.5 req/s. A server still filling up
//     (long requests: completions lag arrivals by an E2EL that grows
//     with the batch) is not judged overloaded until its completions
//     level off.
//  4. The time to first token grows with it: the median wait for a
//     first token, from the request's due time (its TTFT plus its
//     client-side queue time), of the first tokens that arrived in each
//     interval (at least MinTTFTPoints
//     intervals with one) has a positive slope, MinT or more standard
//     errors above zero, and rises by at least MinTTFTRise of its fitted
//     value at the window's start.
//
// The server's vllm:num_requests_waiting is not added to the queue: every
// request it counts is already in flight on the client's side.
//
// No verdict comes before a whole Window has been observed, so a burst that
// levels off within it never triggers one; a closed loop holds its queue
// constant and is never watched. Detector is the rule over a stream of
// Observations; it has no clock of its own, so tests feed it fake time.
package overload

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// Rule is the overload rule's parameters; DefaultRule gives the documented
// ones.
type Rule struct {
	// Window is how much of the run each verdict looks back over.
	Window time.Duration
	// Interval is how often the run is observed.
	Interval time.Duration
	// MinGrowth is the least queue growth, in requests per second.
	MinGrowth float64
	// MinGrowthShare is the least queue growth as a share of the offered
	// rate: the arrivals the server leaves behind.
	MinGrowthShare float64
	// MinT is how many standard errors above zero a slope must be.
	MinT float64
	// MinQueue is the least queue at the window's end.
	MinQueue float64
	// MinTTFTPoints is the least number of intervals in the window with a
	// TTFT.
	MinTTFTPoints int
	// MinTTFTRise is the least rise of the fitted TTFT over the window, as
	// a share of its fitted value at the window's start.
	MinTTFTRise float64
}

// How much the completion rate may rise from the window's first half to
// its second before the rule takes the run for one still filling up:
// late ≤ fillSlack·early + fillMargin requests/s.
const (
	fillSlack  = 1.25
	fillMargin = 0.5
)

// Defaults of the rule.
const (
	DefaultWindow        = 20 * time.Second
	DefaultInterval      = 500 * time.Millisecond
	DefaultMinGrowth     = 1.0
	DefaultGrowthShare   = 0.1
	DefaultMinT          = 3.0
	DefaultMinQueue      = 16.0
	DefaultMinTTFTPoints = 5
	DefaultMinTTFTRise   = 0.5
)

// DefaultRule is the rule vllmperf applies unless told otherwise.
func DefaultRule() Rule {
	return Rule{Window: DefaultWindow, Interval: DefaultInterval, MinGrowth: DefaultMinGrowth, MinGrowthShare: DefaultGrowthShare, MinT: DefaultMinT,
		MinQueue: DefaultMinQueue, MinTTFTPoints: DefaultMinTTFTPoints, MinTTFTRise: DefaultMinTTFTRise}
}

// Validate reports every problem with r, each naming the fix.
func (r Rule) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if r.Interval <= 0 || r.Window < 4*r.Interval {
		add("Window = %v, Interval = %v: want a positive Interval and a Window of at least 4 Intervals (defaults %v, %v)", r.Window, r.Interval, DefaultWindow, DefaultInterval)
	}
	if !(r.MinGrowth > 0) || !(r.MinGrowthShare >= 0) || !(r.MinT > 0) || !(r.MinQueue >= 0) || !(r.MinTTFTRise >= 0) || r.MinTTFTPoints < 3 {
		add("MinGrowth = %v, MinT = %v, MinQueue = %v, MinTTFTRise = %v, MinTTFTPoints = %d: want positive growth and t, a queue and rise ≥ 0, and at least 3 TTFT points",
			r.MinGrowth, r.MinT, r.MinQueue, r.MinTTFTRise, r.MinTTFTPoints)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("overload: invalid rule: %w", err)
	}
	return nil
}

// Observation is the run as seen at one moment.
type Observation struct {
	// At is the time since the measured phase began.
	At time.Duration
	// Queue is the requests in flight plus the arrivals due and not sent.
	Queue float64
	// TTFT is the median wait, from the request's due time, of the first
	// tokens that arrived since the previous observation; HasTTFT is
	// false when none did.
	TTFT    time.Duration
	HasTTFT bool
	// Completed counts the requests that ended successfully so far, Due
	// the arrivals due so far (sent or waiting): their growth over the
	// window is the achieved and the offered rate.
	Completed, Due int
}

// Verdict is an overloaded run's diagnosis; its Error is the message.
type Verdict struct {
	// At is when the rule held, since the measured phase began.
	At time.Duration
	// Offered and Achieved are the window's offered request rate and its
	// completed requests per second; Pace the requests completed per
	// second over the window's later half, once the server had filled:
	// the most it completes at this load.
	Offered, Achieved, Pace float64
	// Growth is the queue's growth in requests/s, Queue its size at At.
	Growth, Queue float64
	// TTFTFrom and TTFTTo are the fitted TTFT at the window's start and
	// end.
	TTFTFrom, TTFTTo time.Duration
	// Window is the rule's window.
	Window time.Duration
}

func (v *Verdict) Error() string {
	return fmt.Sprintf("OVERLOADED: offered %.3g req/s, achieved %.3g req/s, queue growing %.3g/s (%.0f requests queued or in flight %v into the run; "+
		"TTFT rose from %v to %v over the last %v with no sign of levelling): the server cannot keep up with this load",
		v.Offered, v.Achieved, v.Growth, v.Queue, v.At.Round(100*time.Millisecond),
		v.TTFTFrom.Round(time.Millisecond), v.TTFTTo.Round(time.Millisecond), v.Window)
}

// Detector applies a Rule to a run's observations, in time order.
type Detector struct {
	rule Rule
	obs  []Observation
}

// New returns a Detector for r.
func New(r Rule) (*Detector, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return &Detector{rule: r}, nil
}

// Rule returns the detector's rule.
func (d *Detector) Rule() Rule { return d.rule }

// Add records o and returns the verdict when the rule holds at o, else nil.
func (d *Detector) Add(o Observation) *Verdict {
	d.obs = append(d.obs, o)
	from := o.At - d.rule.Window
	i := 0
	for i < len(d.obs) && d.obs[i].At < from {
		i++
	}
	if i == 0 { // the window is not yet covered
		return nil
	}
	d.obs = d.obs[i-1:] // keep the one just before the window: the next call's cover
	return d.judge(d.obs[1:])
}

// judge applies the rule to the observations of one window.
func (d *Detector) judge(w []Observation) *Verdict {
	r := d.rule
	n := len(w)
	if n < 4 {
		return nil
	}
	last := w[n-1]
	b, t := growth(w)
	if b < r.MinGrowth || t < r.MinT || last.Queue < r.MinQueue {
		return nil
	}
	if late, _ := growth(w[n/2:]); late < b/2 {
		return nil
	}
	from, to, ok := d.ttftRise(w)
	if !ok {
		return nil
	}
	span := (last.At - w[0].At).Seconds()
	offered := float64(last.Due-w[0].Due) / span
	if b < r.MinGrowthShare*offered {
		return nil
	}
	// Still short of the offered rate in the later half: not the server
	// filling up (Little's law: long requests keep the early completions
	// below the arrivals for one E2EL) but its throughput left behind.
	mid := w[n/2]
	early := float64(mid.Completed-w[0].Completed) / (mid.At - w[0].At).Seconds()
	late := float64(last.Completed-mid.Completed) / (last.At - mid.At).Seconds()
	if late > (1-r.MinGrowthShare)*offered || late > fillSlack*early+fillMargin {
		return nil
	}
	return &Verdict{At: last.At, Offered: offered, Achieved: float64(last.Completed-w[0].Completed) / span, Pace: late,
		Growth: b, Queue: last.Queue, TTFTFrom: from, TTFTTo: to, Window: r.Window}
}

// ttftRise fits the window's TTFTs and reports their fitted values at its
// ends when they grow as the rule asks.
func (d *Detector) ttftRise(w []Observation) (from, to time.Duration, ok bool) {
	r := d.rule
	pts := 0
	for _, o := range w {
		if o.HasTTFT {
			pts++
		}
	}
	if pts < r.MinTTFTPoints {
		return 0, 0, false
	}
	get := func(o Observation) (float64, bool) { return o.TTFT.Seconds(), o.HasTTFT }
	b, t := fit(w, get)
	a := intercept(w, get, b)
	t0, t1 := w[0].At.Seconds(), w[len(w)-1].At.Seconds()
	y0, y1 := a+b*t0, a+b*t1
	if b <= 0 || t < r.MinT || y1-y0 < r.MinTTFTRise*math.Max(y0, 0) {
		return 0, 0, false
	}
	sec := func(s float64) time.Duration { return time.Duration(math.Max(s, 0) * float64(time.Second)) }
	return sec(y0), sec(y1), true
}

// growth returns the queue's mean growth per second over w and its t
// statistic, from the increments between observations: a queue is a
// random walk, whose least-squares slope would look significant far too
// often, while its increments are close to independent.
func growth(w []Observation) (perSec, t float64) {
	if len(w) < 3 {
		return 0, 0
	}
	inc := make([]float64, len(w)-1)
	for i := range inc {
		inc[i] = (w[i+1].Queue - w[i].Queue) / (w[i+1].At - w[i].At).Seconds()
	}
	m := mean(inc)
	var ss float64
	for _, x := range inc {
		ss += (x - m) * (x - m)
	}
	se := math.Sqrt(ss / float64(len(inc)-1) / float64(len(inc)))
	switch {
	case se > 0:
		return m, m / se
	case m > 0:
		return m, math.Inf(1)
	}
	return m, 0
}

// fit returns the least-squares slope of get's values against time (per
// second) and its t statistic (slope over its standard error; +Inf for a
// perfect fit with a nonzero slope, 0 with fewer than 3 points).
func fit(w []Observation, get func(Observation) (float64, bool)) (slope, t float64) {
	var xs, ys []float64
	for _, o := range w {
		if y, ok := get(o); ok {
			xs, ys = append(xs, o.At.Seconds()), append(ys, y)
		}
	}
	n := float64(len(xs))
	if n < 3 {
		return 0, 0
	}
	mx, my := mean(xs), mean(ys)
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return 0, 0
	}
	slope = sxy / sxx
	var sse float64
	for i := range xs {
		e := ys[i] - (my + slope*(xs[i]-mx))
		sse += e * e
	}
	se := math.Sqrt(sse / (n - 2) / sxx)
	switch {
	case se > 0:
		return slope, slope / se
	case slope > 0:
		return slope, math.Inf(1)
	case slope < 0:
		return slope, math.Inf(-1)
	}
	return 0, 0
}

// intercept is the least-squares line's value at time 0 for slope b.
func intercept(w []Observation, get func(Observation) (float64, bool), b float64) float64 {
	var xs, ys []float64
	for _, o := range w {
		if y, ok := get(o); ok {
			xs, ys = append(xs, o.At.Seconds()), append(ys, y)
		}
	}
	return mean(ys) - b*mean(xs)
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Median returns the median of ds (0 for none); it sorts ds.
func Median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	m := len(ds) / 2
	if len(ds)%2 == 1 {
		return ds[m]
	}
	return (ds[m-1] + ds[m]) / 2
}
