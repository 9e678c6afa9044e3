package capacity

import (
	"fmt"
	"io"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/result"
)

// fellBehind is the share of the sent rate below which a run's completed
// rate is flagged: the server (or the client) could not keep up, so the
// run measured less load than its level says.
const fellBehind = 0.5

// progressLog writes one line per run to w: its place among at most
// maxRuns, the level, goodput and verdict, the rate it completed against
// the one sent (flagged when far below), and the time so far and what
// the budget leaves at most.
func progressLog(w io.Writer, cfg Config, now func() time.Time) func(*result.Result, Trial) {
	began, n := now(), 0
	return func(_ *result.Result, t Trial) {
		n++
		level := num(t.Level) + " req/s"
		if cfg.Mode == Concurrency {
			level = "concurrency " + num(t.Level)
		}
		line := fmt.Sprintf("vllmperf capacity: run %d of ≤%d: %s: %d requests, %.1f%% within the SLO: %s", n, cfg.Capacity.MaxRuns, level, t.Requests, t.GoodputPct(), t.Verdict())
		if cfg.Mode != Concurrency && t.Level > 0 {
			line += fmt.Sprintf("; completed %.2f req/s of the %s sent", t.ReqPerSec, num(t.Level))
			if t.ReqPerSec < fellBehind*t.Level {
				line += " (fell behind: the server took far less than it was sent)"
			}
		}
		elapsed := now().Sub(began)
		left := min(cfg.Capacity.MaxTime-elapsed, time.Duration(cfg.Capacity.MaxRuns-n)*elapsed/time.Duration(n))
		fmt.Fprintf(w, "%s; %s so far, at most %s left\n", line, duration(elapsed), duration(max(left, 0)))
	}
}
