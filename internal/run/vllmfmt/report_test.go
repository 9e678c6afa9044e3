package vllmfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func msd(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// fixture is a small run: a cold warm-up request, three successes (one of
// them a single token) and one timeout.
func fixture() []sample.Sample {
	mk := func(index int, sentMS, queueMS float64, chunks []float64, prompt, completion int) sample.Sample {
		s := sample.Sample{Index: index, Scheduled: t0.Add(msd(sentMS - queueMS)), Sent: t0.Add(msd(sentMS)),
			Header: t0.Add(msd(sentMS + 5)), PromptTokens: prompt, CompletionTokens: completion, FinishReason: "length"}
		for _, c := range chunks {
			s.Chunks = append(s.Chunks, sample.Chunk{At: msd(c), Tokens: 1})
		}
		s.Done = s.Sent.Add(msd(chunks[len(chunks)-1] + 1))
		return s
	}
	warm := mk(0, 0, 0, []float64{355, 365}, 100, 2)
	warm.Warmup = true
	bad := mk(4, 1200, 0, []float64{5}, 0, 0)
	bad.Chunks, bad.FinishReason = nil, ""
	bad.Fail(sample.ErrTimeout, 0, "no chunk for 30s")
	spec := mk(2, 1000, 5, []float64{60, 80, 100}, 200, 5)
	spec.Chunks[2].Tokens = 3 // a speculative chunk with three tokens
	return []sample.Sample{
		warm,
		mk(1, 1000, 0, []float64{40, 50, 60, 70}, 100, 4),
		spec,
		mk(3, 1100, 15, []float64{20}, 50, 1),
		bad,
	}
}

func summary(t *testing.T, samples []sample.Sample, slo stats.SLO) *stats.Summary {
	t.Helper()
	s, err := stats.Summarize(samples, t0.Add(time.Second), t0.Add(3*time.Second), slo)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var meta = Meta{Date: t0, Backend: "openai-chat", ModelID: "Qwen/Qwen3-0.6B", NumPrompts: 4, RequestRate: math.Inf(1), Burstiness: 1, MaxConcurrency: 2}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestWriteTextGolden(t *testing.T) {
	tests := []struct {
		file    string
		samples []sample.Sample
		slo     stats.SLO
	}{
		// A normal run with goodput, a failure and too few samples.
		{"summary.txt", fixture(), stats.SLO{TTFT: msd(50), E2EL: msd(1000)}},
		// Every measured request failed: INCONCLUSIVE, no figures.
		{"inconclusive.txt", fixture()[4:], stats.SLO{}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := WriteText(&b, summary(t, tt.samples, tt.slo)); err != nil {
			t.Fatal(err)
		}
		golden(t, tt.file, b.Bytes())
	}
}

func TestWriteJSONGolden(t *testing.T) {
	tests := []struct {
		file    string
		samples []sample.Sample
		slo     stats.SLO
		meta    Meta
	}{
		// A normal run: rate inf written "inf", goodput set.
		{"result.json", fixture(), stats.SLO{TTFT: msd(50)}, meta},
		// Every measured request failed: figures null, no cap, finite rate.
		{"inconclusive.json", fixture()[4:], stats.SLO{}, Meta{Date: t0, Backend: "vllm", ModelID: "m", RequestRate: 2.5, Burstiness: 1}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := WriteJSON(&b, summary(t, tt.samples, tt.slo), tt.meta); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b.Bytes()) {
			t.Fatalf("%s: invalid JSON:\n%s", tt.file, b.Bytes())
		}
		golden(t, tt.file, b.Bytes())
	}
}

// vllmKeys are the keys of vLLM's --save-result JSON that WriteJSON writes.
var vllmKeys = []string{
	"date", "backend", "model_id", "num_prompts", "request_rate", "burstiness", "max_concurrency",
	"duration", "completed", "failed", "total_input_tokens", "total_output_tokens", "request_throughput",
	"request_goodput", "output_throughput", "total_token_throughput", "max_concurrent_requests",
}

func TestJSONKeys(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteJSON(&b, summary(t, fixture(), stats.SLO{}), meta); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := append([]string{}, vllmKeys...)
	for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, st := range []string{"mean", "median", "std", "p50", "p90", "p95", "p99", "p99.9"} {
			want = append(want, st+"_"+m+"_ms")
		}
	}
	ours := []string{"cold_ttft_ms", "good_requests", "failed_by_kind", "error_examples", "errors", "other_errors", "interrupted", "interrupted_requests",
		"stopped_early", "expected_output_tokens", "short_outputs", "token_itl_ms", "queue_time_ms", "inconclusive", "warnings"}
	for _, k := range append(want, ours...) {
		if _, ok := got[k]; !ok {
			t.Errorf("key %q missing", k)
		}
	}
	if len(got) != len(want)+len(ours) {
		t.Errorf("%d keys, want %d", len(got), len(want)+len(ours))
	}
	// Spot checks of values and vLLM's conventions.
	checks := []struct {
		key  string
		want any
	}{
		{"date", "20261202-120000"}, // vLLM's %Y%m%d-%H%M%S
		{"request_rate", "inf"},     // +Inf as vLLM writes it
		{"max_concurrency", 2.0},    // the cap
		{"request_goodput", nil},    // no SLO: null, like vLLM's None
		{"completed", 3.0},          // three successes
		{"failed", 1.0},             // one timeout
		{"duration", 2.0},           // seconds
		{"mean_ttft_ms", 40.0},      // (40 + 60 + 20)/3
		{"cold_ttft_ms", 355.0},     // the warm-up request 0
		{"failed_by_kind", map[string]any{"timeout": 1.0}},
		{"error_examples", map[string]any{"timeout": "no chunk for 30s"}},                                 // the first timeout's message
		{"errors", []any{map[string]any{"kind": "timeout", "message": "no chunk for 30s", "count": 1.0}}}, // distinct messages, counted
		{"other_errors", 0.0},           // none beyond them
		{"interrupted", false},          // ran to its end
		{"interrupted_requests", 0.0},   // none canceled
		{"stopped_early", nil},          // not stopped early
		{"expected_output_tokens", nil}, // not checked
		{"short_outputs", 0.0},          // so none counted
	}
	for _, c := range checks {
		if !reflect.DeepEqual(got[c.key], c.want) {
			t.Errorf("%s = %#v, want %#v", c.key, got[c.key], c.want)
		}
	}
}

func TestSamplesRoundTrip(t *testing.T) {
	t.Parallel()
	in := fixture()
	var b bytes.Buffer
	if err := WriteSamples(&b, in); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "\n"); n != len(in) {
		t.Errorf("%d lines for %d samples", n, len(in))
	}
	out, err := ReadSamples(&b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip changed the samples:\n in %+v\nout %+v", in, out)
	}
	// Wall-clock times from time.Now survive as the same instants.
	now := sample.Sample{Index: 9, Sent: time.Now(), Done: time.Now().Add(time.Second)}
	b.Reset()
	_ = WriteSamples(&b, []sample.Sample{now})
	back, err := ReadSamples(&b)
	if err != nil || len(back) != 1 || !back[0].Sent.Equal(now.Sent) || !back[0].Done.Equal(now.Done) {
		t.Errorf("time.Now round trip: %v %+v", err, back)
	}
}

func TestReadSamplesErrors(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	tests := []struct {
		name, in string
		line     int
	}{
		// Not JSON at all.
		{"garbage", `{"index":0}` + "\nnot json\n", 2},
		// A field Sample does not have (a different file format).
		{"unknown field", `{"index":0,"ttft":3}` + "\n", 1},
		// Two values on one line.
		{"two values", `{"index":0} {"index":1}` + "\n", 1},
		// Blank lines are skipped but still counted.
		{"after blank", "\n\n{\n", 3},
	}
	for _, tt := range tests {
		_, err := ReadSamples(strings.NewReader(tt.in))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != tt.line {
			t.Errorf("%s: err = %v, want a SyntaxError on line %d", tt.name, err, tt.line)
		}
	}
	got, err := ReadSamples(strings.NewReader(""))
	if err != nil || len(got) != 0 {
		t.Errorf("empty input: %v, %v", got, err)
	}
}
