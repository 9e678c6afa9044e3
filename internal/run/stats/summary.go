// Package stats turns a run's samples into the figures `vllm bench serve`
// reports, computed the way it computes them (vllm/benchmarks/serve.py,
// calculate_metrics): numpy's mean, population std, median and linear
// percentiles over TTFT, TPOT, ITL (pooled per chunk) and E2EL of the
// successful measured requests; throughputs over the measured duration; and
// goodput against SLOs. It adds what vLLM does not report: per-token ITL,
// client queue time, the cold first request's TTFT, failures by kind, and
// warnings when a figure cannot be trusted.
package stats

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
)

// SLO holds the per-request limits of vLLM's --goodput ("ttft:ms tpot:ms
// e2el:ms"). A zero limit is not checked.
type SLO struct {
	TTFT, TPOT, E2EL time.Duration
}

// Set reports whether any limit is given.
func (s SLO) Set() bool { return s.TTFT > 0 || s.TPOT > 0 || s.E2EL > 0 }

// Good reports whether a successful sample meets every limit given, with
// vLLM's rules: a request with one output token or fewer has TPOT 0 (it
// passes a TPOT limit). Unlike vLLM, which counts a missing TTFT as 0, a
// request that produced no content fails TTFT and E2EL limits.
func (s SLO) Good(x *sample.Sample) bool {
	if !x.OK() {
		return false
	}
	if s.TTFT > 0 {
		if d, ok := x.TTFT(); !ok || d > s.TTFT {
			return false
		}
	}
	if s.TPOT > 0 {
		if d, ok := x.TPOT(); ok && d > s.TPOT {
			return false
		}
	}
	if s.E2EL > 0 {
		if d, ok := x.E2EL(); !ok || d > s.E2EL {
			return false
		}
	}
	return true
}

// Summary is what a run measured. Latency Dists are in milliseconds,
// throughputs per second.
type Summary struct {
	// Start and End bound the measured phase; Duration = End − Start.
	Start, End time.Time
	Duration   time.Duration

	// Requests is the number of measured requests sent (warm-up excluded):
	// Completed succeeded, Failed failed, and Interrupted were cut short by
	// the run's interruption (sample.ErrCanceled), which is no failure of
	// the server: Requests = Completed + Failed + Interrupted.
	Requests, Completed, Failed, Interrupted int
	// FailedByKind counts failed requests by error kind.
	FailedByKind map[sample.ErrorKind]int
	// ErrorExamples holds, for each kind in FailedByKind, the first failure
	// of that kind in index order: its message says what went wrong
	// ("This model's maximum context length is 4096 tokens ...").
	ErrorExamples map[sample.ErrorKind]sample.Error
	// Errors groups the failed requests by what went wrong: kind, HTTP
	// status and the server's message, in the order each first appeared
	// (index order), at most MaxErrorGroups of them; OtherErrors counts
	// the failures whose message is not among them.
	Errors      []ErrorGroup
	OtherErrors int

	// Token totals over completed requests, from usage.
	TotalInputTokens, TotalOutputTokens int

	RequestThroughput    float64 // completed requests/s
	OutputThroughput     float64 // output tokens/s
	TotalTokenThroughput float64 // (input + output) tokens/s

	// SLO is the goodput definition; GoodRequests completed requests met
	// it, and RequestGoodput = GoodRequests/Duration. Both are zero when
	// no SLO is set (SLO.Set() false).
	SLO            SLO
	GoodRequests   int
	RequestGoodput float64

	// MaxConcurrentRequests is the most measured requests in flight at
	// one instant (between Sent and Done), from the samples' times. vLLM
	// counts requests active in each whole second, which can read higher.
	MaxConcurrentRequests int

	TTFT, TPOT, ITL, E2EL Dist
	// TokenITL is ITL divided per token (sample.TokenITLs): with
	// speculative decoding a chunk carries several tokens.
	TokenITL Dist
	// QueueTime is client queue time (Sent − Scheduled) of all measured
	// requests, failed included.
	QueueTime Dist

	// ColdTTFT is the TTFT of the run's first request (index 0, warm-up
	// or not), in milliseconds: the arrival of its first content chunk,
	// kept even when the request failed or was cut later (a warning then
	// says so). ColdTTFTOK is false when no content chunk arrived.
	ColdTTFT   float64
	ColdTTFTOK bool

	// ExpectedOutputTokens is Options.ExpectedOutputTokens (0: not
	// checked). ShortOutputs counts the completed requests that returned
	// fewer completion tokens than that, OutputShortfall the tokens they
	// lacked in all, and ShortestOutput the fewest any of them returned.
	ExpectedOutputTokens                          int
	ShortOutputs, OutputShortfall, ShortestOutput int

	// Warnings are non-fatal problems with the figures.
	Warnings []error

	inconclusive string
}

// Inconclusive reports whether the run cannot pass or fail anything, and
// why: no measured request succeeded, or the measured phase had no length.
func (s *Summary) Inconclusive() (reason string, inconclusive bool) {
	return s.inconclusive, s.inconclusive != ""
}

// FewSamplesWarning says a metric's percentiles rest on too few requests:
// p90 needs 10, p99 100, p99.9 1000.
type FewSamplesWarning struct {
	Metric string    // "ttft", "tpot", "itl", "e2el"
	N      int       // the requests it rests on
	Pcts   []float64 // the percentiles with too few
}

func (w *FewSamplesWarning) Error() string {
	var ps []string
	for _, p := range w.Pcts {
		ps = append(ps, fmt.Sprintf("p%v needs ≥%d", p, minSamples(p)))
	}
	return fmt.Sprintf("%s: percentiles rest on %d requests (%s): read them as order statistics, not tail estimates", w.Metric, w.N, strings.Join(ps, ", "))
}

// ErrNoSuccess is the warning (and the inconclusive reason) of a run in
// which no measured request succeeded.
var ErrNoSuccess = errors.New("no measured request succeeded")

// Options are Summarize's inputs besides the samples and the measured
// phase's bounds. The zero value checks nothing beyond the samples.
type Options struct {
	// SLO defines goodput (zero: no goodput figures).
	SLO SLO
	// ExpectedOutputTokens is how many completion tokens every request was
	// promised, when the run sends max_tokens with ignore_eos (0: not
	// checked). Completed requests that returned fewer are counted and
	// warned about: the figures then describe shorter outputs than asked.
	ExpectedOutputTokens int
	// Percentiles are percentiles every distribution carries besides
	// DefaultPercentiles (vLLM's --metric-percentiles), each in (0, 100).
	Percentiles []float64
}

// Summarize computes the Summary of a run's samples with goodput against
// slo; it is SummarizeWith(samples, start, end, Options{SLO: slo}).
func Summarize(samples []sample.Sample, start, end time.Time, slo SLO) (*Summary, error) {
	return SummarizeWith(samples, start, end, Options{SLO: slo})
}

// SummarizeWith computes the Summary of a run's samples (warm-up ones are
// skipped, but index 0 gives the cold TTFT) over the measured phase from
// start to end, as opts asks. It returns an error only for input that
// cannot describe a run: end before start, a negative SLO limit or
// expected token count.
func SummarizeWith(samples []sample.Sample, start, end time.Time, opts Options) (*Summary, error) {
	if err := opts.check(start, end); err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	s := &Summary{Start: start, End: end, Duration: end.Sub(start), SLO: opts.SLO, ExpectedOutputTokens: opts.ExpectedOutputTokens,
		FailedByKind: map[sample.ErrorKind]int{}, ErrorExamples: map[sample.ErrorKind]sample.Error{}}
	var acc accumulator
	for i := range samples {
		s.add(&samples[i], &acc)
	}
	s.finish(&acc, withDefaults(opts.Percentiles))
	s.warn(&acc)
	return s, nil
}

// check refuses inputs that cannot describe a run.
func (opts Options) check(start, end time.Time) error {
	var errs []error
	if end.Before(start) {
		errs = append(errs, fmt.Errorf("end %v is before start %v: pass the measured phase's bounds (load.Result Start, End)", end.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano)))
	}
	if slo := opts.SLO; slo.TTFT < 0 || slo.TPOT < 0 || slo.E2EL < 0 {
		errs = append(errs, fmt.Errorf("SLO %+v has a negative limit: use a positive duration, or 0 for no limit", slo))
	}
	if opts.ExpectedOutputTokens < 0 {
		errs = append(errs, fmt.Errorf("ExpectedOutputTokens = %d: pass the max_tokens sent with ignore_eos, or 0 not to check", opts.ExpectedOutputTokens))
	}
	for _, p := range opts.Percentiles {
		if !(p > 0 && p < 100) {
			errs = append(errs, fmt.Errorf("percentile %v: want one between 0 and 100, such as 25 or 99.9", p))
		}
	}
	return errors.Join(errs...)
}

// accumulator holds what SummarizeWith collects over the samples before
// it computes the distributions.
type accumulator struct {
	ttft, tpot, e2el, queue []time.Duration
	itl, tokITL             []time.Duration
	itlSources, noUsage     int
	cold                    *sample.Sample
	measured                []*sample.Sample
}

// add counts one sample: the cold first request, then (warm-up aside)
// its outcome, tokens and latencies.
func (s *Summary) add(x *sample.Sample, acc *accumulator) {
	if x.Index == 0 {
		acc.cold = x
		if len(x.Chunks) > 0 {
			s.ColdTTFT, s.ColdTTFTOK = ms(x.Chunks[0].At), true
		}
	}
	if x.Warmup {
		return
	}
	acc.measured = append(acc.measured, x)
	s.Requests++
	acc.queue = append(acc.queue, x.QueueTime())
	switch {
	case x.Interrupted():
		s.Interrupted++
		return
	case !x.OK():
		s.countFailure(x.Err)
		return
	}
	s.Completed++
	s.TotalInputTokens += x.PromptTokens
	s.TotalOutputTokens += x.CompletionTokens
	if x.CompletionTokens == 0 && len(x.Chunks) > 0 {
		acc.noUsage++
	} else {
		s.checkOutputLength(x.CompletionTokens)
	}
	acc.addLatencies(x)
	if s.SLO.Set() && s.SLO.Good(x) {
		s.GoodRequests++
	}
}

// addLatencies collects a completed request's TTFT, TPOT, E2EL and ITLs.
func (acc *accumulator) addLatencies(x *sample.Sample) {
	if d, ok := x.TTFT(); ok {
		acc.ttft = append(acc.ttft, d)
	}
	if d, ok := x.TPOT(); ok {
		acc.tpot = append(acc.tpot, d)
	}
	if d, ok := x.E2EL(); ok {
		acc.e2el = append(acc.e2el, d)
	}
	if n := len(acc.itl); len(x.Chunks) > 1 {
		acc.itl = x.ITLs(acc.itl)
		acc.itlSources += min(1, len(acc.itl)-n)
	}
	acc.tokITL = x.TokenITLs(acc.tokITL)
}

// finish computes the distributions and the throughputs.
func (s *Summary) finish(acc *accumulator, pcts []float64) {
	s.TTFT = distAt(durationsMS(acc.ttft), len(acc.ttft), pcts)
	s.TPOT = distAt(durationsMS(acc.tpot), len(acc.tpot), pcts)
	s.ITL = distAt(durationsMS(acc.itl), acc.itlSources, pcts)
	s.TokenITL = distAt(durationsMS(acc.tokITL), acc.itlSources, pcts)
	s.E2EL = distAt(durationsMS(acc.e2el), len(acc.e2el), pcts)
	s.QueueTime = distAt(durationsMS(acc.queue), len(acc.queue), pcts)
	s.MaxConcurrentRequests = maxConcurrent(acc.measured)
	if sec := s.Duration.Seconds(); sec > 0 {
		s.RequestThroughput = float64(s.Completed) / sec
		s.OutputThroughput = float64(s.TotalOutputTokens) / sec
		s.TotalTokenThroughput = float64(s.TotalInputTokens+s.TotalOutputTokens) / sec
		if s.SLO.Set() {
			s.RequestGoodput = float64(s.GoodRequests) / sec
		}
	}
}

// warn adds the run's warnings, the most serious first.
func (s *Summary) warn(acc *accumulator) {
	if err := s.inconclusiveReason(); err != nil {
		s.inconclusive = err.Error()
		s.Warnings = append(s.Warnings, err)
	}
	if s.Failed > 0 && s.Completed > 0 {
		s.Warnings = append(s.Warnings, fmt.Errorf("%d of %d measured requests failed (%s): latency figures cover the %d that succeeded", s.Failed, s.Requests, s.failedKinds(), s.Completed))
	}
	if s.Interrupted > 0 && s.Completed > 0 {
		s.Warnings = append(s.Warnings, fmt.Errorf("the run was interrupted: %d measured requests were canceled in flight; they count as neither completed nor failed", s.Interrupted))
	}
	if s.ShortOutputs > 0 {
		s.Warnings = append(s.Warnings, fmt.Errorf("%d of %d completed requests returned fewer than the %d completion tokens asked for (%d tokens short in all, the shortest %d): the server did not honour max_tokens with ignore_eos, so the figures describe shorter outputs than the run promised",
			s.ShortOutputs, s.Completed, s.ExpectedOutputTokens, s.OutputShortfall, s.ShortestOutput))
	}
	if acc.noUsage > 0 {
		s.Warnings = append(s.Warnings, fmt.Errorf("%d completed requests reported no usage.completion_tokens: output tokens, throughput and TPOT undercount (send stream_options.include_usage)", acc.noUsage))
	}
	if w := coldWarning(acc.cold); w != nil {
		s.Warnings = append(s.Warnings, w)
	}
	s.warnFewSamples()
}

// warnFewSamples warns of each metric whose percentiles rest on too few
// requests.
func (s *Summary) warnFewSamples() {
	for _, m := range []struct {
		name string
		d    Dist
	}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"itl", s.ITL}, {"e2el", s.E2EL}} {
		if m.d.N == 0 {
			continue
		}
		var few []float64
		for _, p := range DefaultPercentiles {
			if m.d.Sources < minSamples(p) {
				few = append(few, p)
			}
		}
		if len(few) > 0 {
			s.Warnings = append(s.Warnings, &FewSamplesWarning{Metric: m.name, N: m.d.Sources, Pcts: few})
		}
	}
}

// countFailure counts a failed request, keeps the first example of its
// kind and adds it to its message's group.
func (s *Summary) countFailure(e *sample.Error) {
	s.Failed++
	s.FailedByKind[e.Kind]++
	if _, seen := s.ErrorExamples[e.Kind]; !seen {
		s.ErrorExamples[e.Kind] = *e
	}
	for i := range s.Errors {
		if g := &s.Errors[i]; g.Kind == e.Kind && g.Status == e.Status && g.Message == e.Message {
			g.Count++
			return
		}
	}
	if len(s.Errors) < MaxErrorGroups {
		s.Errors = append(s.Errors, ErrorGroup{Kind: e.Kind, Status: e.Status, Message: e.Message, Count: 1})
		return
	}
	s.OtherErrors++
}

// MaxErrorGroups is how many distinct failure messages a Summary keeps.
const MaxErrorGroups = 5

// ErrorGroup is one distinct way requests failed, with how many did.
type ErrorGroup struct {
	Kind    sample.ErrorKind `json:"kind"`
	Status  int              `json:"status,omitempty"` // HTTP status, when one was received
	Message string           `json:"message"`
	Count   int              `json:"count"`
}

// String reads "3× HTTP 400: This model's maximum context length is ...
// (http_status)".
func (g ErrorGroup) String() string {
	e := sample.Error{Kind: g.Kind, Status: g.Status, Message: g.Message}
	return fmt.Sprintf("%d× %s (%s)", g.Count, e.Detail(), g.Kind)
}

// ErrorLines lists the failure groups, one a line, clipped to width
// characters each (0: not clipped), with a last line counting the
// failures of other messages, if any.
func (s *Summary) ErrorLines(width int) []string {
	var out []string
	for _, g := range s.Errors {
		line := g.String()
		if width > 0 && len([]rune(line)) > width {
			line = string([]rune(line)[:width-1]) + "…"
		}
		out = append(out, line)
	}
	if s.OtherErrors > 0 {
		out = append(out, fmt.Sprintf("%d× other messages", s.OtherErrors))
	}
	return out
}

// checkOutputLength counts a completed request's output that fell short of
// the promised length.
func (s *Summary) checkOutputLength(n int) {
	if n >= s.ExpectedOutputTokens {
		return
	}
	if s.ShortOutputs == 0 || n < s.ShortestOutput {
		s.ShortestOutput = n
	}
	s.ShortOutputs++
	s.OutputShortfall += s.ExpectedOutputTokens - n
}

// inconclusiveReason says why the run can pass or fail nothing, or nil.
func (s *Summary) inconclusiveReason() error {
	switch {
	case s.Requests == 0:
		return errors.New("no measured request was sent")
	case s.Completed == 0 && s.Failed == 0:
		return fmt.Errorf("%w: all %d were interrupted", ErrNoSuccess, s.Interrupted)
	case s.Completed == 0 && s.Interrupted > 0:
		return fmt.Errorf("%w: %d failed (%s), %d interrupted", ErrNoSuccess, s.Failed, s.failedKinds(), s.Interrupted)
	case s.Completed == 0:
		return fmt.Errorf("%w: all %d failed (%s)", ErrNoSuccess, s.Failed, s.failedKinds())
	case s.Duration <= 0:
		return errors.New("the measured phase has zero duration: throughputs cannot be computed")
	}
	return nil
}

// coldWarning says what is wrong with the first request's TTFT, if
// anything: no content, or a request that did not complete (whose first
// chunk still gives the cold TTFT).
func coldWarning(x *sample.Sample) error {
	switch {
	case x == nil || (x.OK() && len(x.Chunks) > 0) || (x.OK() && x.Unstreamed):
		return nil
	case x.OK():
		return errors.New("the first request (index 0) completed without a content chunk: no cold-start TTFT")
	case len(x.Chunks) == 0:
		return fmt.Errorf("the first request (index 0) ended before its first token (%v): no cold-start TTFT", x.Err)
	}
	return fmt.Errorf("the first request (index 0) did not complete (%v) after %d content chunks: the cold-start TTFT is that of its first chunk", x.Err, len(x.Chunks))
}

// failedKinds lists failure counts by kind, most frequent first.
func (s *Summary) failedKinds() string {
	kinds := slices.SortedFunc(maps.Keys(s.FailedByKind), func(a, b sample.ErrorKind) int {
		return cmp.Or(cmp.Compare(s.FailedByKind[b], s.FailedByKind[a]), cmp.Compare(a, b))
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", s.FailedByKind[k], k)
	}
	return strings.Join(parts, ", ")
}

// maxConcurrent sweeps the samples' [Sent, Done) intervals; a request that
// ends at the instant another starts does not overlap it.
func maxConcurrent(xs []*sample.Sample) int {
	type event struct {
		at    time.Time
		delta int
	}
	var ev []event
	for _, x := range xs {
		if x.Sent.IsZero() || x.Done.Before(x.Sent) {
			continue
		}
		ev = append(ev, event{x.Sent, 1}, event{x.Done, -1})
	}
	slices.SortFunc(ev, func(a, b event) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.delta, b.delta))
	})
	n, peak := 0, 0
	for _, e := range ev {
		n += e.delta
		peak = max(peak, n)
	}
	return peak
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
