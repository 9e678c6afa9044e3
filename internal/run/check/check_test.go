package check

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/target/scrape"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

var t0 = time.Unix(1_700_000_000, 0)

// run is a fake run: n requests of 100 prompt and 10 completion tokens,
// each with a 50 ms client TTFT, and the server's expositions around it.
type run struct {
	n             int
	failed        int
	before, after string
	series        *scrape.TimeSeries
	drained       bool
	conc          int
	expect        scenario.Expect
	scrapeErr     error
}

func (r run) result(t *testing.T) *result.Result {
	t.Helper()
	var samples []sample.Sample
	for i := range r.n + r.failed {
		s := sample.Sample{Index: i, Scheduled: t0, Sent: t0, Done: t0.Add(time.Second)}
		if i >= r.n {
			s.Fail(sample.ErrHTTPStatus, 500, "boom")
		} else {
			s.PromptTokens, s.CompletionTokens = 100, 10
			s.Chunks = []sample.Chunk{{At: 50 * time.Millisecond, Tokens: 1}, {At: time.Second, Tokens: 9}}
		}
		samples = append(samples, s)
	}
	sum, err := stats.Summarize(samples, t0, t0.Add(time.Second), stats.SLO{})
	if err != nil {
		t.Fatal(err)
	}
	sc := &scenario.Scenario{Name: "test", Expect: r.expect}
	res := &result.Result{
		Point:     scenario.Point{Scenario: sc, Key: "conc=8", Load: load.Config{Concurrency: max(r.conc, 1), Requests: r.n + r.failed}},
		Load:      &load.Result{Samples: samples, Start: t0, End: t0.Add(time.Second)},
		Summary:   sum,
		Series:    r.series,
		Drained:   r.drained,
		ScrapeErr: r.scrapeErr,
	}
	if r.before != "" {
		res.Before = parse(t, r.before, t0)
		res.After = parse(t, r.after, t0.Add(2*time.Second))
		res.Delta, res.ScrapeErr = scrape.Diff(res.Before, res.After)
	}
	return res
}

func parse(t *testing.T, text string, at time.Time) *scrape.Snapshot {
	t.Helper()
	s, err := scrape.Parse(strings.NewReader(text), "test", at)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// exposition writes the server's counters: tokens, requests, TTFT
// observations with the given sum, prefix cache, preemptions, gauges.
func exposition(prompt, gen, success, ttftCount, ttftSum, hits, queries, preempt float64, caching string) string {
	return fmt.Sprintf(`# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{engine="0",model_name="m"} %g
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{engine="0",model_name="m"} %g
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} %g
# TYPE vllm:time_to_first_token_seconds histogram
vllm:time_to_first_token_seconds_bucket{engine="0",le="0.1",model_name="m"} %g
vllm:time_to_first_token_seconds_bucket{engine="0",le="+Inf",model_name="m"} %g
vllm:time_to_first_token_seconds_sum{engine="0",model_name="m"} %g
vllm:time_to_first_token_seconds_count{engine="0",model_name="m"} %g
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="m"} %g
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="m"} %g
# TYPE vllm:num_preemptions_total counter
vllm:num_preemptions_total{engine="0",model_name="m"} %g
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0",model_name="m"} 0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine="0",model_name="m"} 0
# TYPE vllm:cache_config_info gauge
vllm:cache_config_info{block_size="16",enable_prefix_caching=%q,engine="0",model_name="m",num_gpu_blocks="1000"} 1
`, prompt, gen, success, ttftCount, ttftCount, ttftSum, ttftCount, hits, queries, preempt, caching)
}

var zero = exposition(0, 0, 0, 0, 0, 0, 0, 0, "True")

// good is the after-exposition of a healthy 8-request run: the server
// counted exactly what the client got, its TTFT mean is 45 ms (the client
// saw 50 ms), 75% prefix hits, no preemption.
var good = exposition(800, 80, 8, 8, 8*0.045, 600, 800, 0, "True")

func series(kv, running float64) *scrape.TimeSeries {
	return &scrape.TimeSeries{Interval: time.Second, Points: []scrape.Point{
		{At: t0, KVUsage: kv / 2, Running: running / 2},
		{At: t0.Add(time.Second), Window: time.Second, KVUsage: kv, Running: running},
	}}
}

// plateau is a series whose running count holds at running for four
// samples while waiting requests queue behind it, the KV cache a third
// full.
func plateau(running, waiting float64) *scrape.TimeSeries {
	return plateauKV(running, waiting, 0.3, 4)
}

// plateauKV is plateau with the KV-cache usage kv on the plateau, held
// for n samples.
func plateauKV(running, waiting, kv float64, n int) *scrape.TimeSeries {
	ts := &scrape.TimeSeries{Interval: time.Second}
	for i := range n {
		ts.Points = append(ts.Points, scrape.Point{At: t0.Add(time.Duration(i) * time.Second), Window: time.Second, Running: running, Waiting: waiting, KVUsage: kv})
	}
	ts.Points = append(ts.Points, scrape.Point{At: t0.Add(time.Duration(n) * time.Second), Window: time.Second, Running: running / 2})
	return ts
}

// ramp is a series whose running count climbs from 1 to 30 with requests
// waiting all along: the queue stood at every level on the way up, so
// there is no plateau (9 of its 30 samples are within 25% of the median).
func ramp() *scrape.TimeSeries {
	ts := &scrape.TimeSeries{Interval: time.Second}
	for i := range 30 {
		r := float64(i + 1)
		ts.Points = append(ts.Points, scrape.Point{At: t0.Add(time.Duration(i) * time.Second), Window: time.Second, Running: r, Waiting: 32 - r, KVUsage: 0.01 * r})
	}
	return ts
}

func find(t *testing.T, rs []Result, name string) Result {
	t.Helper()
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no check %s among %v", name, rs)
	return Result{}
}

func TestChecks(t *testing.T) {
	t.Parallel()
	scope := thresholds.Default().Scope("p", "s")
	healthy := run{n: 8, before: zero, after: good, series: series(0.5, 8), drained: true, conc: 8, expect: scenario.Expect{Batching: true, PrefixReuse: true}}
	for _, tc := range []struct {
		name   string
		run    run
		facts  Facts
		check  string
		status Status
		detail string // part of the detail
	}{
		// A healthy run passes every check.
		{"reconciled", healthy, Facts{}, "reconcile/generation_tokens", Pass, "Δgeneration_tokens_total = 80 = the client's 80"},
		{"ttft gap ok", healthy, Facts{}, "ttft_gap", Pass, "client 50ms, server 45ms"},
		{"kv ok", healthy, Facts{}, "kv_peak", Pass, "peak kv_cache_usage_perc 50.0%"},
		{"prefix ok", healthy, Facts{}, "prefix_hit", Pass, "hit rate 75.0% (600 of 800 tokens) with caching on"},
		{"batching ok", healthy, Facts{}, "batching", Pass, "peak num_requests_running 8"},
		{"drained", healthy, Facts{}, "drain", Pass, "running and waiting at 0"},
		// The server counted one token fewer than the client got: lost.
		{"skewed", run{n: 8, before: zero, after: exposition(800, 79, 8, 8, 0.36, 0, 0, 0, "True"), drained: true}, Facts{}, "reconcile/generation_tokens", Fail, "Δgeneration_tokens_total = 79, but the client received 80"},
		// More than the client sent: another client's traffic (a shared
		// server), INVALID with the excess named, never FAIL.
		{"other traffic tokens", run{n: 8, before: zero, after: exposition(800, 81, 8, 8, 0.36, 0, 0, 0, "True"), drained: true}, Facts{}, "reconcile/generation_tokens", Invalid, "Δgeneration_tokens_total = 81 is 1 more than the client's 80: other traffic"},
		{"other traffic requests", run{n: 8, before: zero, after: exposition(1000, 100, 10, 10, 0.45, 0, 0, 0, "True"), drained: true}, Facts{}, "reconcile/request_success", Invalid, "is 2 more than the client's 8"},
		// A counter going down: every reconciliation is INVALID.
		{"reset", run{n: 8, before: good, after: exposition(100, 10, 1, 1, 0.05, 0, 0, 0, "True"), drained: true}, Facts{}, "reconcile/prompt_tokens", Invalid, "counter reset"},
		// Failed requests make the token counts unknowable.
		{"failures", run{n: 8, failed: 1, before: zero, after: good, drained: true}, Facts{}, "reconcile/prompt_tokens", Inconclusive, "1 requests failed"},
		// No metrics at all: the scrape error is the detail, and it fails.
		{"scrape failed", run{n: 8, scrapeErr: errors.New("GET http://x/metrics: 404 Not Found")}, Facts{}, "reconcile/generation_tokens", Fail, "404 Not Found"},
		// Scrapes of one URL reached several servers (a load balancer):
		// INVALID, by name, never a restart.
		{"several servers", run{n: 8, scrapeErr: &scrape.SeveralServersError{URL: "http://lb/metrics", Starts: []float64{1, 2}, Scrapes: 5}}, Facts{}, "reconcile/request_success", Invalid, "several servers answer at http://lb/metrics: 5 scrapes saw 2 process start times"},
		{"several servers, gauges", run{n: 8, series: series(0.1, 8), scrapeErr: &scrape.SeveralServersError{URL: "http://lb/metrics", Starts: []float64{1, 2}, Scrapes: 5}}, Facts{}, "kv_peak", Invalid, "several servers answer at"},
		// The server's TTFT above the client's: one of them is wrong.
		{"ttft inverted", run{n: 8, before: zero, after: exposition(800, 80, 8, 8, 8*0.060, 0, 0, 0, "True"), drained: true}, Facts{}, "ttft_gap", Fail, "the client measured less than the server"},
		// A server far quicker than the client, still within 100 ms.
		{"ttft gap within limit", run{n: 8, before: zero, after: exposition(800, 80, 8, 8, 8*0.0001, 0, 0, 0, "True"), drained: true}, Facts{}, "ttft_gap", Pass, "gap 49.9ms"},
		{"kv high", run{n: 8, before: zero, after: good, series: series(0.97, 8), drained: true}, Facts{}, "kv_peak", Fail, "peak kv_cache_usage_perc 97.0% (ceiling 90%"},
		{"preempted", run{n: 8, before: zero, after: exposition(800, 80, 8, 8, 0.36, 0, 0, 3, "True"), drained: true}, Facts{}, "preemptions", Fail, "Δnum_preemptions_total = 3 (limit 0)"},
		// Caching on but few hits; caching off but hits.
		{"few hits", run{n: 8, before: zero, after: exposition(800, 80, 8, 8, 0.36, 100, 800, 0, "True"), drained: true, expect: scenario.Expect{PrefixReuse: true}}, Facts{}, "prefix_hit", Fail, "below the floor 50%"},
		{"off and hit", run{n: 8, before: zero, after: exposition(800, 80, 8, 8, 0.36, 100, 800, 0, "False"), drained: true, expect: scenario.Expect{PrefixReuse: true}}, Facts{}, "prefix_hit", Fail, "though caching is off"},
		{"off and none", run{n: 8, before: exposition(0, 0, 0, 0, 0, 0, 0, 0, "False"), after: exposition(800, 80, 8, 8, 0.36, 0, 0, 0, "False"), drained: true, expect: scenario.Expect{PrefixReuse: true}}, Facts{}, "prefix_hit", Pass, "with caching off (ceiling 1%)"},
		// A metric the server does not expose is named.
		{"no hits metric", run{n: 8, before: strings.ReplaceAll(zero, "vllm:prefix_cache_hits_total", "vllm:other_total"), after: strings.ReplaceAll(good, "vllm:prefix_cache_hits_total", "vllm:other_total"), drained: true, expect: scenario.Expect{PrefixReuse: true}}, Facts{}, "prefix_hit", NotAvailable, "prefix_cache_hits_total"},
		// Batching: peak 2 of 8, or of max-num-seqs 2.
		{"no batching", run{n: 8, before: zero, after: good, series: series(0.1, 2), drained: true, conc: 8, expect: scenario.Expect{Batching: true}}, Facts{}, "batching", Fail, "want ≥ 7.2 (90% of concurrency 8"},
		{"seqs cap", run{n: 8, before: zero, after: good, series: series(0.1, 2), drained: true, conc: 8, expect: scenario.Expect{Batching: true}}, Facts{Started: true, MaxNumSeqs: 2}, "batching", Pass, "of max-num-seqs 2"},
		// A deployment the suite did not start: a running plateau with
		// requests waiting is its own cap, not a failure to batch.
		{"deployment's cap", run{n: 8, before: zero, after: good, series: plateau(4, 4), drained: true, conc: 8, expect: scenario.Expect{Batching: true}}, Facts{}, "batching", Pass, "caps its batch at 4 running (up to 4 waiting while 4–4 ran, in 4 of the 4 samples with a queue, over 3s; KV cache at most 30% full): its own max-num-seqs"},
		// The plateau with the KV cache near full: the cache's limit, named
		// as such, not max-num-seqs.
		{"deployment, KV-limited", run{n: 8, before: zero, after: good, series: plateauKV(4, 4, 0.97, 4), drained: true, conc: 8, expect: scenario.Expect{Batching: true}}, Facts{}, "batching", Pass, "the KV cache limits the batch: about 4 running (4–4) with up to 4 waiting in 4 of the 4 samples with a queue (over 3s) while the KV cache was 97% full"},
		// One sample with running > 1 and waiting > 0 is no plateau.
		{"deployment, one sample", run{n: 8, before: zero, after: good, series: plateauKV(4, 4, 0.3, 1), drained: true, conc: 8, expect: scenario.Expect{Batching: true}}, Facts{}, "batching", Fail, "running stayed near 4 in only 1 of the 1 samples that had a queue (a plateau needs 3"},
		// A ramp with a queue all along is no plateau either.
		{"deployment, ramp", run{n: 8, before: zero, after: good, series: ramp(), drained: true, conc: 40, expect: scenario.Expect{Batching: true}}, Facts{}, "batching", Fail, "running stayed near 16 in only 9 of the 30 samples that had a queue"},
		// The same plateau on a server the suite started without a cap:
		// the profile promised more, so it fails.
		{"started, plateau", run{n: 8, before: zero, after: good, series: plateau(4, 4), drained: true, conc: 8, expect: scenario.Expect{Batching: true}}, Facts{Started: true}, "batching", Fail, "not batched together"},
		// A deployment whose running stays low with nothing waiting is
		// not capped: the requests did not reach it together.
		{"deployment, nothing waiting", run{n: 8, before: zero, after: good, series: plateau(4, 0), drained: true, conc: 8, expect: scenario.Expect{Batching: true}}, Facts{}, "batching", Fail, "not batched together"},
		// One at a time with a queue is no batching, whoever set the cap.
		{"deployment, one at a time", run{n: 8, before: zero, after: good, series: plateau(1, 7), drained: true, conc: 8, expect: scenario.Expect{Batching: true}}, Facts{}, "batching", Fail, "not batched together"},
		// No series: the sampler never ran.
		{"no series", run{n: 8, before: zero, after: good, drained: true}, Facts{}, "kv_peak", Fail, "sampled no /metrics time series"},
		// Queues still busy after the load.
		{"not drained", run{n: 8, before: zero, after: good, drained: false}, Facts{}, "drain", Fail, "still not 0"},
		// No request succeeded: never a pass.
		{"all failed", run{failed: 4, before: zero, after: zero, drained: true}, Facts{}, "requests", Inconclusive, "no measured request succeeded"},
		{"some failed", run{n: 8, failed: 1, before: zero, after: good, drained: true}, Facts{}, "requests", Fail, "1 of 9 requests failed (11.1%; limit 0.0%): 1 http_status"},
		// What the server said comes with the failures, counted.
		{"server said", run{n: 8, failed: 2, before: zero, after: good, drained: true}, Facts{}, "requests", Fail, "2 http_status; the server said: 2× HTTP 500: boom (http_status)"},
		{"all failed, server said", run{failed: 3, before: zero, after: zero, drained: true}, Facts{}, "requests", Inconclusive, "all 3 failed (3 http_status); the server said: 3× HTTP 500: boom (http_status)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := find(t, All(tc.run.result(t), scope, tc.facts), tc.check)
			if got.Status != tc.status || !strings.Contains(got.Detail, tc.detail) {
				t.Errorf("%s = %s: %s\nwant %s with %q", tc.check, got.Status, got.Detail, tc.status, tc.detail)
			}
			if tc.status != Pass && !got.Failed(true) {
				t.Errorf("a %s check must fail a strict run", got.Status)
			}
		})
	}
}

func TestFailedStrictness(t *testing.T) {
	t.Parallel()
	na := Result{Status: NotAvailable}
	if !na.Failed(true) || na.Failed(false) {
		t.Error("NOT_AVAILABLE fails strict runs only")
	}
	for _, s := range []Status{Fail, Invalid, Inconclusive} {
		if !(Result{Status: s}).Failed(false) {
			t.Errorf("%s must fail even a lenient run", s)
		}
	}
}

func TestSLO(t *testing.T) {
	t.Parallel()
	set, err := thresholds.Parse("t.yaml", []byte("slo:\n  ttft-p99-ns: {max: 40ms}\n  tok/s: {min: 1}\n  goodput-req/s: {min: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	rs := All(run{n: 8, before: zero, after: good, drained: true}.result(t), set.Scope("p", "s"), Facts{})
	if r := find(t, rs, "slo/ttft-p99-ns"); r.Status != Fail || !strings.Contains(r.Detail, "ttft-p99-ns = 50ms is above the limit 40ms") {
		t.Errorf("ttft slo: %s", r)
	}
	if r := find(t, rs, "slo/tok/s"); r.Status != Pass {
		t.Errorf("tok/s slo: %s", r)
	}
	// No goodput SLO was set, so the run has no goodput figure: named, not passed.
	if r := find(t, rs, "slo/goodput-req/s"); r.Status != NotAvailable || r.Metric != "goodput-req/s" {
		t.Errorf("goodput slo: %s", r)
	}
}

func TestTTFTGapTooWide(t *testing.T) {
	t.Parallel()
	set, err := thresholds.Parse("t.yaml", []byte("checks: {ttft_gap_max: 2ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := run{n: 8, before: zero, after: good, drained: true}.result(t)
	if r := find(t, All(res, set.Scope("p", "s"), Facts{}), "ttft_gap"); r.Status != Fail || !strings.Contains(r.Detail, "the client adds more than the limit") {
		t.Errorf("ttft gap: %s", r)
	}
}

// TestRequestsEnded: a server that went down fails the requests check,
// even when no request succeeded (never only INCONCLUSIVE), as it fails
// vllmperf run (check.Ended is the policy both read).
func TestRequestsEnded(t *testing.T) {
	t.Parallel()
	res := run{failed: 3, before: zero, after: zero, drained: true}.result(t)
	res.ServerDown = errors.New("server no longer healthy: /health answered 503")
	got := find(t, All(res, thresholds.Empty().Scope("p", "s"), Facts{}), "requests")
	if got.Status != Fail || !strings.Contains(got.Detail, "no longer healthy") {
		t.Errorf("requests = %s: %s, want FAIL naming the server", got.Status, got.Detail)
	}
}

// TestInvalidIsTheGatesInvalid ties the status the benchmark writes to the
// one the gate reads back from the bench output.
func TestInvalidIsTheGatesInvalid(t *testing.T) {
	if string(Invalid) != input.StatusInvalid {
		t.Errorf("check.Invalid = %q, gate.StatusInvalid = %q: the gate would not recognise an INVALID run", Invalid, input.StatusInvalid)
	}
}
