package capacity

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Metrics are the search's bench units: the capacity (slo-capacity-req/s
// in Rate mode, slo-capacity-conc in Concurrency mode, gated, higher is
// better) and the users in flight at it (slo-capacity-users). Empty when
// the capacity was not found: a bound is no capacity, and a figure that
// was not measured is left out, never written as 0.
func (r *Result) Metrics() map[string]float64 {
	m := map[string]float64{}
	if !r.Found {
		return m
	}
	if r.Config.Mode == Concurrency {
		m[units.CapacityConc] = r.Pass.Level
	} else {
		m[units.CapacityRate] = r.Pass.Level
	}
	m[units.CapacityUsers] = r.Pass.Users
	return m
}

// SLOText is the per-request rule as stated: "at least 99% of requests
// each within TTFT ≤ 500ms and TPOT ≤ 100ms" (vLLM's --goodput rule: a
// request counts when it meets every limit; not a P99 of each figure
// apart).
func (r *Result) SLOText() string {
	var parts []string
	for _, l := range []struct {
		name string
		d    time.Duration
	}{{"TTFT", r.Config.SLO.TTFT}, {"TPOT", r.Config.SLO.TPOT}, {"E2EL", r.Config.SLO.E2EL}} {
		if l.d > 0 {
			parts = append(parts, fmt.Sprintf("%s ≤ %s", l.name, l.d))
		}
	}
	return fmt.Sprintf("at least %s%% of requests each within %s", strconv.FormatFloat(100*r.Config.Capacity.GoodputMin, 'g', 4, 64), strings.Join(parts, " and "))
}

// Statement is the result in one sentence: "14.1 requests/s (≈ 9.2
// concurrent users) with at least 99% of requests each within TTFT ≤
// 500ms and TPOT ≤ 100ms", with the goodput and its interval at the
// passing and the failing level that bound it, the budget used, and why
// it is borderline when it is; or why there is no capacity.
func (r *Result) Statement() string {
	if r.OutOfReach {
		return "no capacity: " + r.Reason
	}
	if !r.Found {
		return "capacity not found: " + r.Reason
	}
	p, f := r.Pass, r.Fail
	head := fmt.Sprintf("%s requests/s (≈ %s concurrent users)", num(p.Level), num(p.Users))
	if r.Config.Mode == Concurrency {
		head = fmt.Sprintf("%s concurrent users (%s requests/s)", num(p.Level), num(p.ReqPerSec))
	}
	pg, fg := r.LevelGoodput(p.Level), r.LevelGoodput(f.Level)
	s := fmt.Sprintf("%s with %s: %.1f%% (%s) of %d requests met the SLO at %s; %.1f%% (%s) of %d at %s, %.0f%% above (%s)",
		head, r.SLOText(), pg.Pct, pg.Range(), pg.Requests, r.Config.FormatLevel(p.Level), fg.Pct, fg.Range(), fg.Requests,
		r.Config.FormatLevel(f.Level), 100*(f.Level/p.Level-1), r.Budget())
	if r.Borderline != "" {
		s += "; borderline: " + r.Borderline
	}
	return s
}

// WriteTable writes the runs behind the result, in the order they ran:
// level, requests, goodput with its 95% interval, the server's queue peak,
// P99 TTFT and TPOT, throughput, users, verdict, and any notes below.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	level := units.Label(units.ReqPerSec) + " sent"
	if r.Config.Mode == Concurrency {
		level = "in flight"
	}
	fmt.Fprintf(tw, "run\t%s\trequests\tgoodput\t95%% interval\tqueue peak\t%s\t%s\t%s\tusers\tverdict\t\n", level,
		units.Label(units.TTFTP99), units.Label(units.TPOTP99), units.Label(units.ReqPerSec))
	for i, t := range r.Trials {
		ttft, tpot, queue := "-", "-", "-"
		if t.HasP99 {
			ttft, tpot = ms(t.TTFTP99), ms(t.TPOTP99)
		}
		if t.HasWaiting {
			queue = num(t.WaitingPeak)
		}
		g := GoodputOf(t.Good, t.Requests)
		fmt.Fprintf(tw, "%d\t%s\t%d\t%.1f%%\t%s\t%s\t%s\t%s\t%.2f\t%.1f\t%s\t\n", i+1, num(t.Level), t.Requests, g.Pct, g.Range(), queue, ttft, tpot, t.ReqPerSec, t.Users, t.Verdict())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i, t := range r.Trials {
		for _, n := range t.Notes {
			if _, err := fmt.Fprintf(w, "run %d: %s\n", i+1, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// Goodput is the share of requests that met the SLO over some runs, with
// its 95% interval (stats.Goodput).
type Goodput = stats.Goodput

// GoodputOf is good of requests with its interval (stats.GoodputOf).
func GoodputOf(good, requests int) Goodput { return stats.GoodputOf(good, requests) }

// LevelGoodput is the goodput over every run at level.
func (r *Result) LevelGoodput(level float64) Goodput {
	good, requests := 0, 0
	for _, t := range r.Trials {
		if t.Level == level {
			good, requests = good+t.Good, requests+t.Requests
		}
	}
	return GoodputOf(good, requests)
}

// num writes a level or a count with 3 significant digits, whole numbers
// from 100 up.
func num(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// ms writes milliseconds with 3 significant digits: "212ms", "5.6s".
func ms(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v/1000, 'g', 3, 64) + "s"
	}
	return strconv.FormatFloat(v, 'g', 3, 64) + "ms"
}
