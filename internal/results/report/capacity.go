package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// LastCapacities returns the last capacity search of each profile and
// scenario.
func LastCapacities(s *results.Summary) []results.Capacity {
	return lastBy(s.Capacities, func(c results.Capacity) string { return c.Profile + "/" + c.Scenario })
}

// capacityColumns is a capacity search's table: each run's level, goodput
// with its 95% interval, the server's queue peak, P99s, throughput, users
// and verdict, in the order they ran.
var capacityColumns = []column[results.CapacityRun]{
	numCol("level", func(r results.CapacityRun) string { return strconv.FormatFloat(r.Level, 'g', -1, 64) }),
	numCol("requests", func(r results.CapacityRun) string { return strconv.Itoa(r.Requests) }),
	numCol("within the SLO", func(r results.CapacityRun) string {
		if r.Requests == 0 {
			return "–"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(r.Good)/float64(r.Requests))
	}),
	numCol("95% interval", func(r results.CapacityRun) string {
		if r.Requests == 0 {
			return "–"
		}
		return stats.GoodputOf(r.Good, r.Requests).Range()
	}),
	numCol("queue peak", func(r results.CapacityRun) string {
		if r.WaitingPeak == nil {
			return "–"
		}
		return strconv.FormatFloat(*r.WaitingPeak, 'g', -1, 64)
	}),
	numCol("TTFT p99 (ms)", func(r results.CapacityRun) string { return msOrDash(r.TTFTP99Ms) }),
	numCol("TPOT p99 (ms)", func(r results.CapacityRun) string { return msOrDash(r.TPOTP99Ms) }),
	numCol("completed/s", func(r results.CapacityRun) string { return fmt.Sprintf("%.2f", r.ReqPerSec) }),
	numCol("users", func(r results.CapacityRun) string { return fmt.Sprintf("%.1f", r.Users) }),
	statusCol("verdict", "status", func(r results.CapacityRun) string {
		if r.Pass {
			return string(verdict.Pass)
		}
		return string(verdict.Fail)
	}),
	plainCol("notes", func(r results.CapacityRun) string { return strings.Join(r.Notes, "; ") }),
}

func msOrDash(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f", *v)
}

// capacityTables are the searches' tables, in the order of Capacities.
func (r *Report) capacityTables() []table {
	var out []table
	for _, c := range r.Capacities {
		out = append(out, makeTable(capacityColumns, c.Runs, nil))
	}
	return out
}
