package vllmfmt

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/vocab/vllmdate"
)

// Meta is the run description that the result JSON carries besides the
// Summary: the keys vLLM takes from its command line.
type Meta struct {
	// Date is when the run happened ("date", in vllmdate.Layout, as given: pass
	// the time in the zone wanted).
	Date time.Time
	// Backend is the client backend, e.g. "openai-chat" or "vllm" ("backend").
	Backend string
	// ModelID is the model ("model_id").
	ModelID string
	// NumPrompts is the requested number of measured requests
	// ("num_prompts"), as vLLM's --num-prompts; 0 (a run bounded by time
	// only) writes the Summary's Requests, the number sent. A run that was
	// interrupted or stopped early keeps the number asked for: the number
	// sent is completed + failed + interrupted_requests.
	NumPrompts int
	// RequestRate is the open-loop rate ("request_rate"); math.Inf(1) is
	// written as the string "inf", as vLLM does. A closed loop of N is
	// vLLM's rate inf with max_concurrency N.
	RequestRate float64
	// Burstiness is the arrival shape ("burstiness").
	Burstiness float64
	// MaxConcurrency caps in-flight requests ("max_concurrency"); 0 (no
	// cap) is written as null, as vLLM writes None.
	MaxConcurrency int
	// Interrupted marks a run stopped by its caller before it finished
	// (load.Result.Canceled). "interrupted" is also true when the Summary
	// counts interrupted requests.
	Interrupted bool
	// StoppedEarly says why the run stopped before its bound, such as
	// load.Result.Streak's message ("stopped_early"); "" when it did not.
	StoppedEarly string
	// Extra are further keys of vllmperf's own, written last in order
	// (the steady-state window, a ramp-up's windows); their values must
	// marshal to JSON.
	Extra []Field
}

// Field is one key of Meta.Extra.
type Field struct {
	Key   string
	Value any
}

// WriteJSON writes s and meta as one JSON object with exactly the keys of
// vLLM's --save-result file, in vLLM's order: date, backend, model_id,
// num_prompts, request_rate, burstiness, max_concurrency, duration,
// completed, failed, total_input_tokens, total_output_tokens,
// request_throughput, request_goodput, output_throughput,
// total_token_throughput, max_concurrent_requests, then for ttft, tpot, itl
// and e2el: mean_, median_, std_ and p50_/p90_/p95_/p99_/p99.9_<metric>_ms.
//
// Choices where vLLM's output is not valid JSON or not honest:
//   - request_rate +Inf is the string "inf" (vLLM's own choice: Python would
//     otherwise write the invalid token Infinity);
//   - a figure with no samples (say, TPOT when every request made one token)
//     is null, where vLLM writes a made-up 0; request_goodput is null
//     without an SLO, as in vLLM; NaN or ±Inf anywhere else is null too.
//
// Keys of vllmperf's own follow, named so they cannot clash with vLLM's
// (none starts with mean_, median_, std_ or p<digits>_): cold_ttft_ms,
// good_requests, failed_by_kind, error_examples (per kind, the first
// failure's "HTTP 400: message"), interrupted (bool), interrupted_requests
// (canceled in flight by the interruption; not in failed), stopped_early
// (why the run stopped before its bound, or null), expected_output_tokens
// (null when not checked) and short_outputs, token_itl_ms and
// queue_time_ms (objects with mean, median, std, min, max, n and the
// percentiles), inconclusive (the reason, or null) and warnings (strings).
// WriteJSONWith's extra keys come last (lora_adapters, reasoning: see
// result.Result.JSONExtras).
func WriteJSON(w io.Writer, s *stats.Summary, meta Meta) error {
	return WriteJSONWith(w, s, meta)
}

// WriteJSONWith is WriteJSON with extra keys after vllmperf's own
// (extra.go).
func WriteJSONWith(w io.Writer, s *stats.Summary, meta Meta, extras ...Extra) error {
	var o object
	saveResultKeys(&o, s, meta)
	ownKeys(&o, s, meta)
	for _, e := range extras {
		o.add(e.Key, e.Value)
	}

	raw, err := o.marshal()
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

// saveResultKeys adds vLLM's --save-result keys, in its order.
func saveResultKeys(o *object, s *stats.Summary, meta Meta) {
	o.add("date", meta.Date.Format(vllmdate.Layout))
	o.add("backend", meta.Backend)
	o.add("model_id", meta.ModelID)
	o.add("num_prompts", cmp.Or(meta.NumPrompts, s.Requests))
	if math.IsInf(meta.RequestRate, 1) {
		o.add("request_rate", "inf")
	} else {
		o.add("request_rate", num(meta.RequestRate))
	}
	o.add("burstiness", num(meta.Burstiness))
	if meta.MaxConcurrency > 0 {
		o.add("max_concurrency", meta.MaxConcurrency)
	} else {
		o.add("max_concurrency", nil)
	}
	o.add("duration", num(s.Duration.Seconds()))
	figureKeys(o, s)
}

// figureKeys adds the save-result keys of the figures: the counts, the
// throughputs and the latency distributions.
func figureKeys(o *object, s *stats.Summary) {
	o.add("completed", s.Completed)
	o.add("failed", s.Failed)
	o.add("total_input_tokens", s.TotalInputTokens)
	o.add("total_output_tokens", s.TotalOutputTokens)
	o.add("request_throughput", num(s.RequestThroughput))
	if s.SLO.Set() {
		o.add("request_goodput", num(s.RequestGoodput))
	} else {
		o.add("request_goodput", nil)
	}
	o.add("output_throughput", num(s.OutputThroughput))
	o.add("total_token_throughput", num(s.TotalTokenThroughput))
	o.add("max_concurrent_requests", s.MaxConcurrentRequests)
	for _, m := range []struct {
		name string
		d    stats.Dist
	}{{"ttft", s.TTFT}, {"tpot", s.TPOT}, {"itl", s.ITL}, {"e2el", s.E2EL}} {
		o.add("mean_"+m.name+"_ms", figure(m.d, m.d.Mean))
		o.add("median_"+m.name+"_ms", figure(m.d, m.d.Median))
		o.add("std_"+m.name+"_ms", figure(m.d, m.d.Std))
		for _, p := range pcts(m.d) {
			o.add("p"+pctWord(p.P)+"_"+m.name+"_ms", figure(m.d, p.Value))
		}
	}
}

// ownKeys adds vllmperf's own keys, after vLLM's.
func ownKeys(o *object, s *stats.Summary, meta Meta) {
	if s.ColdTTFTOK {
		o.add("cold_ttft_ms", num(s.ColdTTFT))
	} else {
		o.add("cold_ttft_ms", nil)
	}
	if s.SLO.Set() {
		o.add("good_requests", s.GoodRequests)
	} else {
		o.add("good_requests", nil)
	}
	kinds := map[string]int{}
	for k, n := range s.FailedByKind {
		kinds[string(k)] = n
	}
	o.add("failed_by_kind", kinds)
	examples := map[string]string{}
	for k, e := range s.ErrorExamples {
		examples[string(k)] = e.Detail()
	}
	o.add("error_examples", examples)
	o.add("errors", orEmpty(s.Errors))
	o.add("other_errors", s.OtherErrors)
	o.add("interrupted", meta.Interrupted || s.Interrupted > 0)
	o.add("interrupted_requests", s.Interrupted)
	o.add("stopped_early", orNull(meta.StoppedEarly))
	if s.ExpectedOutputTokens > 0 {
		o.add("expected_output_tokens", s.ExpectedOutputTokens)
	} else {
		o.add("expected_output_tokens", nil)
	}
	o.add("short_outputs", s.ShortOutputs)
	o.add("token_itl_ms", distObject(s.TokenITL))
	o.add("queue_time_ms", distObject(s.QueueTime))
	reason, _ := s.Inconclusive()
	o.add("inconclusive", orNull(reason))
	warnings := make([]string, 0, len(s.Warnings))
	for _, w := range s.Warnings {
		warnings = append(warnings, w.Error())
	}
	o.add("warnings", warnings)
	for _, f := range meta.Extra {
		o.add(f.Key, f.Value)
	}
}

// orNull is text, or null when it is empty.
func orNull(text string) any {
	if text == "" {
		return nil
	}
	return text
}

// pcts returns d's percentiles, or DefaultPercentiles with no values for an
// empty Dist, so that every key is always present.
func pcts(d stats.Dist) []stats.Pct {
	if len(d.Pcts) > 0 {
		return d.Pcts
	}
	out := make([]stats.Pct, len(stats.DefaultPercentiles))
	for i, p := range stats.DefaultPercentiles {
		out[i] = stats.Pct{P: p, Value: math.NaN()}
	}
	return out
}

// figure is v, or null when d has no samples.
func figure(d stats.Dist, v float64) any {
	if d.N == 0 {
		return nil
	}
	return num(v)
}

// num is v, or null when JSON cannot hold it.
func num(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

func distObject(d stats.Dist) any {
	var o object
	o.add("n", d.N)
	o.add("mean", figure(d, d.Mean))
	o.add("median", figure(d, d.Median))
	o.add("std", figure(d, d.Std))
	o.add("min", figure(d, d.Min))
	o.add("max", figure(d, d.Max))
	for _, p := range pcts(d) {
		o.add("p"+pctWord(p.P), figure(d, p.Value))
	}
	return o
}

// object is a JSON object that keeps its keys in insertion order.
type object struct {
	keys []string
	vals []any
}

func (o *object) add(k string, v any) {
	o.keys = append(o.keys, k)
	o.vals = append(o.vals, v)
}

func (o object) marshal() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON implements json.Marshaler for nested objects.
func (o object) MarshalJSON() ([]byte, error) { return o.marshal() }

type kindCount struct {
	kind string
	n    int
}

// sortedKinds lists failures by kind, most frequent first.
func sortedKinds(s *stats.Summary) []kindCount {
	var out []kindCount
	for _, k := range slices.Sorted(maps.Keys(s.FailedByKind)) {
		out = append(out, kindCount{string(k), s.FailedByKind[k]})
	}
	slices.SortStableFunc(out, func(a, b kindCount) int { return cmp.Compare(b.n, a.n) })
	return out
}

// orEmpty is gs, or an empty list for none (never null).
func orEmpty(gs []stats.ErrorGroup) []stats.ErrorGroup {
	if gs == nil {
		return []stats.ErrorGroup{}
	}
	return gs
}
