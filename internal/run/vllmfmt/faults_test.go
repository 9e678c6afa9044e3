package vllmfmt

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The tests in this file are the reports' rows of docs/reliability.md.

const contextLengthMsg = "This model's maximum context length is 4096 tokens. However, you requested 5128 tokens (5000 in the messages, 128 in the completion). Please reduce the length of the messages or completion."

// faultyRun is an interrupted run against a server that ignores
// ignore_eos: two successes (one of 3 tokens where 128 were asked for), two
// context-length refusals, and one request canceled by the interruption.
func faultyRun(t *testing.T) *stats.Summary {
	t.Helper()
	mk := func(index int, sentMS float64, chunks []float64, completion int) sample.Sample {
		s := sample.Sample{Index: index, Scheduled: t0.Add(msd(sentMS)), Sent: t0.Add(msd(sentMS)), Header: t0.Add(msd(sentMS + 5)),
			PromptTokens: 5000, CompletionTokens: completion, FinishReason: "length"}
		for _, c := range chunks {
			s.Chunks = append(s.Chunks, sample.Chunk{At: msd(c), Tokens: 1})
		}
		s.Done = s.Sent.Add(msd(100))
		return s
	}
	refused := func(index int, sentMS float64) sample.Sample {
		s := mk(index, sentMS, nil, 0)
		s.PromptTokens, s.FinishReason = 0, ""
		s.Fail(sample.ErrHTTPStatus, 400, "BadRequestError: "+contextLengthMsg)
		return s
	}
	canceled := mk(4, 1400, []float64{30}, 0)
	canceled.Fail(sample.ErrCanceled, 0, "canceled: context canceled")
	samples := []sample.Sample{
		mk(0, 1000, []float64{40, 50, 60}, 128),
		mk(1, 1100, []float64{30, 40}, 3),
		refused(2, 1200),
		refused(3, 1300),
		canceled,
	}
	s, err := stats.SummarizeWith(samples, t0.Add(time.Second), t0.Add(2*time.Second), stats.Options{ExpectedOutputTokens: 128})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var faultyMeta = Meta{Date: t0, Backend: "openai-chat", ModelID: "m", NumPrompts: 100, RequestRate: 4, Burstiness: 1, Interrupted: true}

func TestFaultReportsGolden(t *testing.T) {
	var txt, js bytes.Buffer
	if err := WriteText(&txt, faultyRun(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "faults.txt", txt.Bytes())
	if err := WriteJSON(&js, faultyRun(t), faultyMeta); err != nil {
		t.Fatal(err)
	}
	golden(t, "faults.json", js.Bytes())
}

func TestRow06_ErrorExamplesInReports(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	s := faultyRun(t)
	var txt bytes.Buffer
	if err := WriteText(&txt, s); err != nil {
		t.Fatal(err)
	}
	if want := "  http_status:                           2\n    e.g. HTTP 400: BadRequestError: This model's maximum context length is 4096 tokens."; !strings.Contains(txt.String(), want) {
		t.Errorf("text lacks %q:\n%s", want, txt.String())
	}
	got := decodeJSON(t, s, faultyMeta)
	want := map[string]any{"http_status": "HTTP 400: BadRequestError: " + contextLengthMsg}
	if ex, _ := got["error_examples"].(map[string]any); len(ex) != 1 || ex["http_status"] != want["http_status"] {
		t.Errorf("error_examples = %v, want %v", got["error_examples"], want)
	}
}

func TestRow12_ShortOutputsInReports(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	got := decodeJSON(t, faultyRun(t), faultyMeta)
	if got["expected_output_tokens"] != 128.0 || got["short_outputs"] != 1.0 {
		t.Errorf("expected_output_tokens %v, short_outputs %v; want 128, 1", got["expected_output_tokens"], got["short_outputs"])
	}
	warnings, _ := got["warnings"].([]any)
	found := false
	for _, w := range warnings {
		found = found || strings.Contains(w.(string), "1 of 2 completed requests returned fewer than the 128 completion tokens asked for (125 tokens short in all, the shortest 3)")
	}
	if !found {
		t.Errorf("warnings lack the short-output count: %v", warnings)
	}
}

func TestRow14_InterruptedInReports(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	s := faultyRun(t)
	got := decodeJSON(t, s, faultyMeta)
	checks := []struct {
		key  string
		want any
	}{
		{"interrupted", true},         // the marker
		{"interrupted_requests", 1.0}, // the canceled one, apart
		{"failed", 2.0},               // only the two refusals
		{"completed", 2.0},            // the two successes
		{"num_prompts", 100.0},        // what was asked for, as vLLM's --num-prompts
		{"failed_by_kind", map[string]any{"http_status": 2.0}},
	}
	for _, c := range checks {
		if b, _ := json.Marshal(got[c.key]); string(b) != mustJSON(t, c.want) {
			t.Errorf("%s = %s, want %s", c.key, b, mustJSON(t, c.want))
		}
	}
	for _, k := range vllmKeys {
		if _, ok := got[k]; !ok {
			t.Errorf("vLLM key %q missing", k)
		}
	}
	var txt bytes.Buffer
	if err := WriteText(&txt, s); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(txt.String(), "Interrupted requests:                    1\n") {
		t.Errorf("text lacks the interrupted count:\n%s", txt.String())
	}
	// The Meta marker alone sets "interrupted" (a run canceled between
	// requests has no canceled sample); without either it is false.
	clean := decodeJSON(t, summary(t, fixture(), stats.SLO{}), Meta{Interrupted: true})
	if clean["interrupted"] != true || clean["interrupted_requests"] != 0.0 {
		t.Errorf("Meta.Interrupted: interrupted %v, requests %v", clean["interrupted"], clean["interrupted_requests"])
	}
}

func TestRow10_StoppedEarlyInJSON(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	const why = "stopped early after 100 consecutive identical failures (http_status (HTTP 500): engine dead); 9900 requests not sent"
	got := decodeJSON(t, summary(t, fixture(), stats.SLO{}), Meta{StoppedEarly: why})
	if got["stopped_early"] != why || got["interrupted"] != false {
		t.Errorf("stopped_early %v, interrupted %v", got["stopped_early"], got["interrupted"])
	}
}

func decodeJSON(t *testing.T, s *stats.Summary, meta Meta) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJSON(&b, s, meta); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, b.Bytes())
	}
	return got
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
