package clock

import "time"

// BehindWindow is the span of engine activity the behind ratio covers.
const BehindWindow = time.Second

// CatchUpWindow is how far behind its schedule the loop may fall and still
// keep back-to-back steps on the timing model's deadlines; further behind
// (a stalled process), it restarts from now instead of bursting steps to
// catch up.
const CatchUpWindow = 2 * time.Millisecond

// Pace keeps the real-time loop's account (the loop's goroutine only): the
// engine time modelled and lost in seconds, and the share lost over the
// last BehindWindow of activity (the engine's pace series, package simpace).
type Pace struct {
	Modelled, Lost interface{ Add(float64) }
	Ratio          interface{ Set(float64) }
	// The current window: engine time lost since winStart.
	winStart time.Time
	winLost  time.Duration
}

// Start places a step that the schedule has begin at sched (the previous
// step's end, or when a request left the front end; zero: no schedule, the
// engine was idle) and that the loop reaches at now: it returns when the step starts, sched when the loop is within
// CatchUpWindow of it, else now, counting the time in between as lost.
func (p *Pace) Start(sched, now time.Time) time.Time {
	p.roll(now)
	if sched.IsZero() || sched.After(now) {
		return now
	}
	late := now.Sub(sched)
	if late < CatchUpWindow {
		return sched
	}
	p.Lost.Add(late.Seconds())
	p.winLost += late
	return now
}

// Ran records d of modelled engine time.
func (p *Pace) Ran(d time.Duration) {
	p.Modelled.Add(d.Seconds())
}

// roll opens a window at the first activity and closes it once it spans
// BehindWindow.
func (p *Pace) roll(now time.Time) {
	if p.winStart.IsZero() {
		p.winStart = now
		return
	}
	if now.Sub(p.winStart) >= BehindWindow {
		p.Close(now)
		p.winStart = now
	}
}

// Close sets the ratio gauge from the window, if one is open, and closes
// it; the engine closes it when it goes idle, so that idle time never
// dilutes the next window.
func (p *Pace) Close(now time.Time) {
	if span := now.Sub(p.winStart); !p.winStart.IsZero() && span > 0 {
		p.Ratio.Set(min(1, float64(p.winLost)/float64(span)))
	}
	p.winStart, p.winLost = time.Time{}, 0
}
