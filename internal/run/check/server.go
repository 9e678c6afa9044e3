package check

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// clientTotals sums what the client received over every request of the
// run, warm-up included (the snapshots bracket the warm-up too).
type clientTotals struct {
	completed, failed  int
	prompt, completion int
	ttftSum            time.Duration
	ttftN              int
	failedKinds        map[sample.ErrorKind]int
}

func (c *checker) totals() clientTotals {
	t := clientTotals{failedKinds: map[sample.ErrorKind]int{}}
	for _, s := range c.res.Samples() {
		if !s.OK() {
			t.failed++
			t.failedKinds[s.Err.Kind]++
			continue
		}
		t.completed++
		t.prompt += s.PromptTokens
		t.completion += s.CompletionTokens
		if d, ok := s.TTFT(); ok {
			t.ttftSum += d
			t.ttftN++
		}
	}
	return t
}

// reconcile: the server's counters moved by exactly what the client saw.
func (c *checker) reconcile() []Result {
	t := c.totals()
	type pair struct {
		name, metric string
		client       float64
		read         func() (float64, error)
	}
	d, derr := c.delta()
	counter := func(metric string) func() (float64, error) {
		return func() (float64, error) { return d.Counter(metric) }
	}
	pairs := []pair{
		{"reconcile/generation_tokens", scrape.GenerationTokensTotal, float64(t.completion), counter(scrape.GenerationTokensTotal)},
		{"reconcile/prompt_tokens", scrape.PromptTokensTotal, float64(t.prompt), counter(scrape.PromptTokensTotal)},
		{"reconcile/request_success", scrape.RequestSuccessTotal, float64(t.completed), counter(scrape.RequestSuccessTotal)},
		{"reconcile/ttft_count", scrape.TimeToFirstTokenSeconds, float64(t.completed), func() (float64, error) {
			h, err := d.Histogram(scrape.TimeToFirstTokenSeconds)
			if err != nil {
				return 0, err
			}
			return h.Count, nil
		}},
	}
	var out []Result
	for _, p := range pairs {
		if derr != nil {
			out = append(out, unavailable(p.name, derr))
			continue
		}
		v, err := p.read()
		switch {
		case err != nil:
			out = append(out, unavailable(p.name, err))
		case t.failed > 0:
			out = append(out, Result{Name: p.name, Status: Inconclusive, Detail: fmt.Sprintf("%d requests failed (%s): the server may have counted part of them, so Δ%s = %g cannot be matched to the client's %g", t.failed, failedKinds(t.failedKinds), p.metric, v, p.client)})
		case v > p.client:
			out = append(out, otherTraffic(p.name, p.metric, v, p.client))
		case v != p.client:
			out = append(out, fail(p.name, "Δ%s = %g, but the client received %g", p.metric, v, p.client))
		default:
			out = append(out, pass(p.name, "Δ%s = %g = the client's %g", p.metric, v, p.client))
		}
	}
	return out
}

// otherTraffic is a counter that moved by more than this client sent:
// another client used the server during the run (a shared deployment),
// so the counter cannot be matched to this run. INVALID with the excess
// named, never FAIL: nothing says the server lost or invented a token.
// (Fewer than the client received is still a FAIL: no other client can
// take counts away.)
func otherTraffic(name, metric string, v, client float64) Result {
	return Result{Name: name, Status: Invalid, Detail: fmt.Sprintf("Δ%s = %g is %g more than the client's %g: other traffic reached the server during the run (a shared deployment, or another client), so its counters cannot be matched to this run; run on a server no one else uses to check them (docs/deployments.md)",
		metric, v, v-client, client)}
}

// ttftGapTolerance is how far the client's mean TTFT may fall below the
// server's: the server's histogram sum is exact, but the two clocks stamp
// slightly different instants (the server's arrival is after the client's
// send, so a lower client mean is otherwise impossible).
const ttftGapTolerance = time.Millisecond

// ttftGap: client TTFT ≥ server TTFT, by at most the scope's bound.
func (c *checker) ttftGap() Result {
	const name = "ttft_gap"
	d, err := c.delta()
	if err != nil {
		return unavailable(name, err)
	}
	h, err := d.Histogram(scrape.TimeToFirstTokenSeconds)
	if err != nil {
		return unavailable(name, err)
	}
	server, err := h.Mean()
	if err != nil {
		return unavailable(name, err)
	}
	t := c.totals()
	if t.ttftN == 0 {
		return Result{Name: name, Status: Inconclusive, Detail: "no request produced a first token"}
	}
	client := t.ttftSum / time.Duration(t.ttftN)
	srv := time.Duration(server * float64(time.Second))
	gap := client - srv
	detail := fmt.Sprintf("mean TTFT: client %s, server %s (gap %s, limit %s)", round(client), round(srv), round(gap), c.scope.Checks.TTFTGapMax)
	switch {
	case gap < -ttftGapTolerance:
		return fail(name, "%s: the client measured less than the server, so one of them is wrong", detail)
	case gap > c.scope.Checks.TTFTGapMax:
		return fail(name, "%s: the client adds more than the limit on top of the server", detail)
	}
	return pass(name, "%s", detail)
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }

// kvPeak: KV-cache usage stayed under the scope's ceiling.
func (c *checker) kvPeak() Result {
	const name = "kv_peak"
	ts, err := c.series()
	if err != nil {
		return unavailable(name, err)
	}
	v, err := ts.PeakKVUsage()
	if err != nil {
		return unavailable(name, err)
	}
	detail := fmt.Sprintf("peak kv_cache_usage_perc %.1f%% (ceiling %.0f%%, %d samples)", 100*v, 100*c.scope.Checks.KVPeakMax, len(ts.Points))
	if v > c.scope.Checks.KVPeakMax {
		return fail(name, "%s", detail)
	}
	return pass(name, "%s", detail)
}

// series returns the run's /metrics time series, or why there is none to
// read. A series whose every scrape failed is a failed read (its first
// error, with the URL or the line), not a missing metric.
func (c *checker) series() (*scrape.TimeSeries, error) {
	ts := c.res.Series
	var several *scrape.SeveralServersError
	switch {
	case errors.As(c.res.ScrapeErr, &several):
		return nil, several // each point is one replica's, whichever answered
	case ts == nil:
		return nil, c.missingSeries()
	case len(ts.Points) == 0 && len(ts.Errors) > 0:
		return nil, fmt.Errorf("no scrape during the run succeeded (%d failed; first: %w)", len(ts.Errors), ts.Errors[0])
	}
	return ts, nil
}

func (c *checker) missingSeries() error {
	if c.res.ScrapeErr != nil {
		return c.res.ScrapeErr
	}
	return fmt.Errorf("the run sampled no /metrics time series")
}

// preemptions: no more than the scope allows at nominal load.
func (c *checker) preemptions() Result {
	name := units.Preemptions // the check is named after the unit it bounds
	d, err := c.delta()
	if err != nil {
		return unavailable(name, err)
	}
	v, err := d.Counter(scrape.NumPreemptionsTotal)
	if err != nil {
		return unavailable(name, err)
	}
	detail := fmt.Sprintf("Δnum_preemptions_total = %g (limit %g)", v, c.scope.Checks.PreemptionsMax)
	if v > c.scope.Checks.PreemptionsMax {
		return fail(name, "%s: the KV cache ran out and requests were recomputed", detail)
	}
	return pass(name, "%s", detail)
}

// drain: the queues emptied after the load.
func (c *checker) drain() Result {
	const name = "drain"
	var several *scrape.SeveralServersError
	switch {
	case errors.As(c.res.ScrapeErr, &several):
		return unavailable(name, several) // one replica's queues, not the deployment's
	case c.res.After == nil:
		return unavailable(name, c.missingSeries())
	}
	for _, g := range []string{scrape.NumRequestsRunning, scrape.NumRequestsWaiting} {
		if _, err := c.res.After.Gauge(g); err != nil {
			return unavailable(name, err)
		}
	}
	if !c.res.Drained {
		r, _ := c.res.After.Gauge(scrape.NumRequestsRunning)
		w, _ := c.res.After.Gauge(scrape.NumRequestsWaiting)
		return fail(name, "running %g and waiting %g still not 0 %s after the load (limit %s)", r, w, c.res.DrainWait.Round(time.Millisecond), c.scope.Checks.DrainTimeout)
	}
	return pass(name, "running and waiting at 0 within %s of the load's end", c.res.DrainWait.Round(time.Millisecond))
}

// prefixHit: with caching on the hit rate is above the floor; off, ≈0.
func (c *checker) prefixHit() Result {
	const name = "prefix_hit"
	if c.res.After == nil {
		return unavailable(name, c.missingSeries())
	}
	info, err := c.res.After.Info(scrape.CacheConfigInfo)
	if err != nil {
		return unavailable(name, err)
	}
	label := c.res.After.Family().Metrics.PrefixCachingLabel
	if label == "" {
		return Result{Name: name, Status: NotAvailable, Metric: scrape.CacheConfigInfo, Detail: fmt.Sprintf("the %s server family names no %s label that says whether prefix caching is on", c.res.After.Family().Name, scrape.CacheConfigInfo)}
	}
	on, known := map[string]bool{"True": true, "true": true, "False": false, "false": false}[info[label]]
	if !known {
		return Result{Name: name, Status: NotAvailable, Metric: scrape.CacheConfigInfo + "{" + label + "}", Detail: fmt.Sprintf("cache_config_info has %s=%q: cannot tell whether caching is on", label, info[label])}
	}
	d, err := c.delta()
	if err != nil {
		return unavailable(name, err)
	}
	hits, errH := d.Counter(scrape.PrefixCacheHitsTotal)
	queries, errQ := d.Counter(scrape.PrefixCacheQueriesTotal)
	if errH != nil {
		return unavailable(name, errH)
	}
	if errQ != nil {
		return unavailable(name, errQ)
	}
	rate := 0.0
	if queries > 0 {
		rate = hits / queries
	}
	detail := fmt.Sprintf("prefix-cache hit rate %.1f%% (%g of %g tokens) with caching %s", 100*rate, hits, queries, map[bool]string{true: "on", false: "off"}[on])
	switch {
	case on && rate < c.scope.Checks.PrefixHitMin:
		return fail(name, "%s: below the floor %.0f%%", detail, 100*c.scope.Checks.PrefixHitMin)
	case !on && rate > c.scope.Checks.PrefixHitOffMax:
		return fail(name, "%s: above %.0f%% though caching is off", detail, 100*c.scope.Checks.PrefixHitOffMax)
	case on:
		return pass(name, "%s (floor %.0f%%)", detail, 100*c.scope.Checks.PrefixHitMin)
	}
	return pass(name, "%s (ceiling %.0f%%)", detail, 100*c.scope.Checks.PrefixHitOffMax)
}

// batching: running reached min(concurrency, max-num-seqs). Where the
// server was started with known flags the cap is the profile's; where it
// was not (a deployment reached by URL), a sustained running plateau with
// requests waiting is the server's own cap (plateau.go: named the KV
// cache's when the cache was near full), and batching up to it passes.
func (c *checker) batching() Result {
	const name = "batching"
	ts, err := c.series()
	if err != nil {
		return unavailable(name, err)
	}
	peak, err := ts.PeakRunning()
	if err != nil {
		return unavailable(name, err)
	}
	want := c.res.Point.Load.Concurrency
	limit := "concurrency"
	if n := c.facts.MaxNumSeqs; c.facts.Started && n > 0 && n < want {
		want, limit = n, c.capFlag()
	}
	need := c.scope.Checks.RunningMinShare * float64(want)
	detail := fmt.Sprintf("peak num_requests_running %g, want ≥ %g (%.0f%% of %s %d; %d samples)", peak, need, 100*c.scope.Checks.RunningMinShare, limit, want, len(ts.Points))
	if peak >= need {
		return pass(name, "%s", detail)
	}
	if !c.facts.Started {
		if _, err := ts.WaitingAtPeakRunning(); err != nil {
			return unavailable(name, err)
		}
		if r, ok := deploymentCap(ts, c.res.Point.Load.Concurrency, detail); ok {
			return r
		}
	}
	return fail(name, "%s: requests are not batched together", detail)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
