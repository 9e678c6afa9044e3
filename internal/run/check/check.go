// Package check asserts what a run's server reported: its Prometheus
// counters reconcile with what the client received, its KV cache stayed
// within bounds, prefix caching and batching did what the profile says,
// the queues drained, the run met thresholds.yaml's limits, and a
// simulator kept its timing model's pace in real time (realtime.go).
//
// Every check has a status. Only PASS is a pass: a metric the server does
// not expose is NOT_AVAILABLE by name (a failure in strict mode, and never
// a pass); a counter reset makes the reconciliation INVALID; a check that
// cannot decide (failed requests make token counts unknowable) is
// INCONCLUSIVE with the reason.
package check

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// Status is a check's outcome (package verdict declares the words).
type Status = verdict.Status

// The statuses.
const (
	Pass         = verdict.Pass
	Fail         = verdict.Fail
	Invalid      = verdict.Invalid
	NotAvailable = verdict.NotAvailable
	Inconclusive = verdict.Inconclusive
)

// Result is one check's outcome (verdict.Check, the check line).
type Result = verdict.Check

// Facts are what the caller knows about the server beyond its metrics.
type Facts struct {
	// Started is true when the caller started the server with known
	// flags (its profile); false for a deployment it only reached, whose
	// flags are its own.
	Started bool
	// MaxNumSeqs is the server's --max-num-seqs when Started; 0 when not
	// set (vLLM's default of 256 or 1024 is above any suite concurrency).
	MaxNumSeqs int
}

// All runs every check that applies to res.
func All(res *result.Result, scope thresholds.Scope, facts Facts) []Result {
	c := &checker{res: res, scope: scope, facts: facts}
	out := []Result{c.requests()}
	out = append(out, c.slo()...)
	out = append(out, c.reconcile()...)
	out = append(out, c.ttftGap(), c.kvPeak(), c.preemptions(), c.drain())
	if res.Point.Scenario != nil && res.Point.Scenario.Expect.PrefixReuse {
		out = append(out, c.prefixHit())
	}
	if res.Point.Scenario != nil && res.Point.Scenario.Expect.Batching && res.Point.Load.Concurrency > 0 {
		out = append(out, c.batching())
	}
	if c.simulated() {
		out = append(out, c.simRealTime())
	}
	return out
}

// Failures returns the results that fail the run (see Result.Failed).
func Failures(rs []Result, strict bool) []Result {
	var out []Result
	for _, r := range rs {
		if r.Failed(strict) {
			out = append(out, r)
		}
	}
	return out
}

type checker struct {
	res   *result.Result
	scope thresholds.Scope
	facts Facts
}

func pass(name, format string, args ...any) Result {
	return Result{Name: name, Status: Pass, Detail: fmt.Sprintf(format, args...)}
}

func fail(name, format string, args ...any) Result {
	return Result{Name: name, Status: Fail, Detail: fmt.Sprintf(format, args...)}
}

// unavailable turns an error reading a metric into the check's result:
// NOT_AVAILABLE naming the metric, INVALID for a counter reset, FAIL for a
// scrape that failed.
func unavailable(name string, err error) Result {
	var na *scrape.NotAvailableError
	var reset *scrape.ResetError
	var several *scrape.SeveralServersError
	switch {
	case errors.As(err, &na):
		return Result{Name: name, Status: NotAvailable, Metric: na.Metric, Detail: err.Error()}
	case errors.As(err, &several):
		return Result{Name: name, Status: Invalid, Detail: several.Error()}
	case errors.As(err, &reset):
		return Result{Name: name, Status: Invalid, Detail: "counter reset during the run, the deltas mean nothing: " + err.Error()}
	default:
		return Result{Name: name, Status: Fail, Detail: "could not read the server's metrics: " + err.Error()}
	}
}

// delta returns the run's delta or the reason it is missing.
func (c *checker) delta() (*scrape.Delta, error) {
	if c.res.Delta != nil {
		return c.res.Delta, nil
	}
	if c.res.ScrapeErr != nil {
		return nil, c.res.ScrapeErr
	}
	return nil, errors.New("the run did not scrape /metrics")
}

// requests: the error rate against max_error_rate; no success never
// passes. Failed requests are shown with what the server said (the first
// distinct messages, with counts and HTTP status), so that a run refused
// by the server says why.
func (c *checker) requests() Result {
	s := c.res.Summary
	said := serverSaid(s)
	if ended := Ended(c.res); len(ended) > 0 {
		return fail("requests", "%s%s", errors.Join(ended...), said)
	}
	if reason, bad := s.Inconclusive(); bad {
		return Result{Name: "requests", Status: Inconclusive, Detail: reason + said}
	}
	rate, over := ErrorRate(s, c.scope.MaxErrorRate)
	detail := fmt.Sprintf("%d of %d requests failed (%.1f%%; limit %.1f%%)", s.Failed, s.Requests, 100*rate, 100*c.scope.MaxErrorRate)
	if s.Failed > 0 {
		detail += ": " + failedKinds(s.FailedByKind) + said
	}
	if over {
		return fail("requests", "%s", detail)
	}
	return pass("requests", "%s", detail)
}

// maxSaidWidth clips each server message in a check's detail.
const maxSaidWidth = 300

// serverSaid is "; the server said: ..." with the run's failure groups,
// or "" when no request failed.
func serverSaid(s *stats.Summary) string {
	lines := s.ErrorLines(maxSaidWidth)
	if len(lines) == 0 {
		return ""
	}
	return "; the server said: " + strings.Join(lines, "; ")
}

func failedKinds[K ~string](m map[K]int) string {
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%d %s", n, k))
	}
	return strings.Join(parts, ", ")
}

// slo: every absolute limit of the scope on the run's metrics.
func (c *checker) slo() []Result {
	m := c.res.Metrics()
	var out []Result
	for _, unit := range sortedKeys(c.scope.SLO) {
		lim := c.scope.SLO[unit]
		name := "slo/" + unit
		v, ok := m[unit]
		if !ok {
			out = append(out, Result{Name: name, Status: NotAvailable, Metric: unit, Detail: fmt.Sprintf("the run has no %s to hold to %s", unit, lim.String(unit))})
			continue
		}
		if why := lim.Check(unit, v); why != "" {
			out = append(out, fail(name, "%s", why))
			continue
		}
		out = append(out, pass(name, "%s = %s, limit %s", unit, units.FormatValue(unit, v), lim.String(unit)))
	}
	return out
}
