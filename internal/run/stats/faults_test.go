package stats

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The tests in this file are the statistics' rows of docs/reliability.md.

// failedWith builds a failed sample with the given error.
func failedWith(index int, kind sample.ErrorKind, status int, msg string) sample.Sample {
	s := req(index, float64(index), 0, nil, 10, 0)
	s.Fail(kind, status, msg)
	return s
}

// warningsText joins the warnings for substring checks.
func warningsText(s *Summary) string {
	var parts []string
	for _, w := range s.Warnings {
		parts = append(parts, w.Error())
	}
	return strings.Join(parts, "\n")
}

func TestRow06_ErrorExamples(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	const ctxMsg = "This model's maximum context length is 4096 tokens. However, you requested 5128 tokens (5000 in the messages, 128 in the completion). Please reduce the length of the messages or completion."
	warm := failedWith(0, sample.ErrConnection, 0, "warm-up failure, not measured")
	warm.Warmup = true
	samples := []sample.Sample{
		warm,
		failedWith(1, sample.ErrHTTPStatus, 400, ctxMsg),
		req(2, 2, 0, []float64{10}, 5, 1),
		failedWith(3, sample.ErrHTTPStatus, 500, "a later http_status failure is not the example"),
		failedWith(4, sample.ErrTimeout, 0, "no stream event for 1m0s (idle timeout)"),
		failedWith(5, sample.ErrCanceled, 0, "an interruption is not a failure"),
	}
	s, err := Summarize(samples, t0, t0.Add(time.Second), SLO{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[sample.ErrorKind]sample.Error{
		sample.ErrHTTPStatus: {Kind: sample.ErrHTTPStatus, Status: 400, Message: ctxMsg},
		sample.ErrTimeout:    {Kind: sample.ErrTimeout, Message: "no stream event for 1m0s (idle timeout)"},
	}
	if len(s.ErrorExamples) != len(want) {
		t.Errorf("ErrorExamples = %v, want %v", s.ErrorExamples, want)
	}
	for k, w := range want {
		if got := s.ErrorExamples[k]; got != w {
			t.Errorf("ErrorExamples[%s] = %+v, want %+v", k, got, w)
		}
	}
	if got := s.ErrorExamples[sample.ErrHTTPStatus]; got.Detail() != "HTTP 400: "+ctxMsg {
		t.Errorf("Detail() = %q", got.Detail())
	}
}

func TestRow12_ShortOutputs(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	full := func(i int) sample.Sample { return req(i, float64(i), 0, []float64{1, 2}, 10, 128) }
	short := func(i, n int) sample.Sample { return req(i, float64(i), 0, []float64{1, 2}, 10, n) }
	tests := []struct {
		name                     string
		samples                  []sample.Sample
		expected                 int
		wantShort, wantShortfall int
		wantShortest             int
		wantWarning              string // "" means no short-output warning
	}{
		// Every request returned the 128 tokens asked for.
		{"all full", []sample.Sample{full(0), full(1)}, 128, 0, 0, 0, ""},
		// A server ignoring ignore_eos: 3 of 128, and 100 of 128.
		{"two short", []sample.Sample{full(0), short(1, 3), short(2, 100)}, 128, 2, 153, 3,
			"2 of 3 completed requests returned fewer than the 128 completion tokens asked for (153 tokens short in all, the shortest 3)"},
		// Not checked when the run did not promise a length.
		{"unchecked", []sample.Sample{short(0, 3)}, 0, 0, 0, 0, ""},
		// A request without usage is the no-usage warning's, not short;
		// a failed request is not short either.
		{"no usage, failed", []sample.Sample{full(0), short(1, 0), failedWith(2, sample.ErrTimeout, 0, "x")}, 128, 0, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := SummarizeWith(tt.samples, t0, t0.Add(time.Second), Options{ExpectedOutputTokens: tt.expected})
			if err != nil {
				t.Fatal(err)
			}
			if s.ShortOutputs != tt.wantShort || s.OutputShortfall != tt.wantShortfall || s.ShortestOutput != tt.wantShortest {
				t.Errorf("short %d, shortfall %d, shortest %d; want %d, %d, %d",
					s.ShortOutputs, s.OutputShortfall, s.ShortestOutput, tt.wantShort, tt.wantShortfall, tt.wantShortest)
			}
			text := warningsText(s)
			switch {
			case tt.wantWarning == "" && strings.Contains(text, "asked for"):
				t.Errorf("unexpected short-output warning:\n%s", text)
			case tt.wantWarning != "" && !strings.Contains(text, tt.wantWarning):
				t.Errorf("warnings lack %q:\n%s", tt.wantWarning, text)
			}
		})
	}
	if _, err := SummarizeWith(nil, t0, t0, Options{ExpectedOutputTokens: -1}); err == nil || !strings.Contains(err.Error(), "ExpectedOutputTokens = -1") {
		t.Errorf("negative expected tokens: err = %v", err)
	}
}

func TestRow13_ColdRequestWarning(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	ok := req(0, 0, 0, []float64{120, 130}, 10, 2)
	cut := req(0, 0, 0, []float64{120, 130, 140}, 10, 3)
	cut.Fail(sample.ErrGraceExpired, 0, "still in flight when the grace period (1s) after the run's duration (1s) ended")
	before := failedWith(0, sample.ErrHTTPStatus, 500, "engine dead")
	empty := req(0, 0, 0, nil, 10, 0)
	tests := []struct {
		name     string
		cold     sample.Sample
		wantOK   bool
		wantTTFT float64
		want     string // substring of the cold warning; "" means none
	}{
		// A complete first request: its TTFT, no warning.
		{"complete", ok, true, 120, ""},
		// Cut by the grace period after three chunks (the case):
		// the TTFT of its first chunk is real, and the warning says why
		// the request did not complete instead of "no first token".
		{"grace cut", cut, true, 120, "did not complete (grace_expired: still in flight when the grace period (1s) after the run's duration (1s) ended) after 3 content chunks"},
		// Failed before any chunk.
		{"failed first", before, false, 0, "ended before its first token (http_status (HTTP 500): engine dead)"},
		// Completed but with no content at all.
		{"no content", empty, false, 0, "completed without a content chunk"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Summarize([]sample.Sample{tt.cold, req(1, 1, 0, []float64{5}, 10, 1)}, t0, t0.Add(time.Second), SLO{})
			if err != nil {
				t.Fatal(err)
			}
			if s.ColdTTFTOK != tt.wantOK || s.ColdTTFT != tt.wantTTFT {
				t.Errorf("ColdTTFT = %v (ok %v), want %v (ok %v)", s.ColdTTFT, s.ColdTTFTOK, tt.wantTTFT, tt.wantOK)
			}
			text := warningsText(s)
			if strings.Contains(text, "produced no first token") {
				t.Errorf("the old, wrong warning:\n%s", text)
			}
			switch {
			case tt.want == "" && strings.Contains(text, "first request (index 0)"):
				t.Errorf("unexpected cold warning:\n%s", text)
			case tt.want != "" && !strings.Contains(text, tt.want):
				t.Errorf("warnings lack %q:\n%s", tt.want, text)
			}
		})
	}
}

func TestRow14_InterruptedNotFailed(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	canceled := func(i int) sample.Sample { return failedWith(i, sample.ErrCanceled, 0, "canceled: context canceled") }
	samples := []sample.Sample{
		req(0, 0, 0, []float64{10, 20}, 10, 2),
		failedWith(1, sample.ErrHTTPStatus, 500, "boom"),
		canceled(2),
		canceled(3),
	}
	s, err := Summarize(samples, t0, t0.Add(time.Second), SLO{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 4 || s.Completed != 1 || s.Failed != 1 || s.Interrupted != 2 {
		t.Errorf("requests %d = completed %d + failed %d + interrupted %d, want 4 = 1 + 1 + 2", s.Requests, s.Completed, s.Failed, s.Interrupted)
	}
	if _, in := s.FailedByKind[sample.ErrCanceled]; in {
		t.Errorf("FailedByKind = %v counts the interrupted", s.FailedByKind)
	}
	text := warningsText(s)
	for _, want := range []string{"1 of 4 measured requests failed (1 http_status)", "the run was interrupted: 2 measured requests were canceled in flight"} {
		if !strings.Contains(text, want) {
			t.Errorf("warnings lack %q:\n%s", want, text)
		}
	}
}

// TestZeroSuccessesNeverPass checks that every run without a successful
// measured request is INCONCLUSIVE, whatever else it holds.
func TestZeroSuccessesNeverPass(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	canceled := func(i int) sample.Sample { return failedWith(i, sample.ErrCanceled, 0, "canceled") }
	warmOK := req(0, 0, 0, []float64{1}, 1, 1)
	warmOK.Warmup = true
	tests := []struct {
		name    string
		samples []sample.Sample
		want    string
	}{
		// Nothing sent.
		{"nothing", nil, "no measured request was sent"},
		// Only a successful warm-up.
		{"warm-up only", []sample.Sample{warmOK}, "no measured request was sent"},
		// All failed: a wrong key.
		{"all auth", []sample.Sample{failedWith(0, sample.ErrAuth, 401, "Unauthorized"), failedWith(1, sample.ErrAuth, 401, "Unauthorized")}, "all 2 failed (2 auth)"},
		// All cut by the grace period (row 13's run).
		{"all grace cut", []sample.Sample{failedWith(0, sample.ErrGraceExpired, 0, "x")}, "all 1 failed (1 grace_expired)"},
		// All interrupted.
		{"all interrupted", []sample.Sample{canceled(0), canceled(1), canceled(2)}, "all 3 were interrupted"},
		// Failed and interrupted.
		{"failed and interrupted", []sample.Sample{failedWith(0, sample.ErrProtocol, 0, "SSE event exceeds 4 MiB"), canceled(1)}, "1 failed (1 protocol), 1 interrupted"},
		// A successful warm-up does not rescue failed measured requests.
		{"warm-up ok, measured failed", []sample.Sample{warmOK, failedWith(1, sample.ErrTimeout, 0, "x")}, "all 1 failed (1 timeout)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Summarize(tt.samples, t0, t0.Add(time.Second), SLO{TTFT: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			reason, inc := s.Inconclusive()
			if !inc || !strings.Contains(reason, tt.want) {
				t.Errorf("Inconclusive() = %q, %v; want a reason containing %q", reason, inc, tt.want)
			}
			if s.Completed != 0 || s.GoodRequests != 0 {
				t.Errorf("completed %d, good %d, want 0", s.Completed, s.GoodRequests)
			}
			if s.Requests > 0 && !errors.Is(s.Warnings[0], ErrNoSuccess) {
				t.Errorf("first warning %v is not ErrNoSuccess", s.Warnings[0])
			}
		})
	}
}

// TestErrorGroups: failed requests grouped by kind, status and message,
// in order of first appearance, capped at MaxErrorGroups with the rest
// counted.
func TestErrorGroups(t *testing.T) {
	t.Parallel()
	const long = "This model's maximum context length is 1024 tokens. However, you requested 1606 tokens."
	fail := func(kind sample.ErrorKind, status int, msg string) func(i int) sample.Sample {
		return func(i int) sample.Sample { return failedWith(i, kind, status, msg) }
	}
	tests := []struct {
		name      string
		failures  []func(int) sample.Sample
		want      []string // ErrorLines(0)
		wantOther int
	}{
		{"none", nil, nil, 0},
		// The same message counted once, with its status and kind.
		{"one message", []func(int) sample.Sample{fail(sample.ErrHTTPStatus, 400, long), fail(sample.ErrHTTPStatus, 400, long), fail(sample.ErrHTTPStatus, 400, long)},
			[]string{"3× HTTP 400: " + long + " (http_status)"}, 0},
		// Same text, another status: another group; order of first sight.
		{"by status", []func(int) sample.Sample{fail(sample.ErrHTTPStatus, 500, "boom"), fail(sample.ErrHTTPStatus, 400, "boom"), fail(sample.ErrHTTPStatus, 500, "boom")},
			[]string{"2× HTTP 500: boom (http_status)", "1× HTTP 400: boom (http_status)"}, 0},
		// A stream's error event has no status.
		{"api error", []func(int) sample.Sample{fail(sample.ErrAPIEvent, 0, "injected failure")},
			[]string{"1× injected failure (api_error)"}, 0},
		// Past MaxErrorGroups distinct messages the rest are counted.
		{"capped", []func(int) sample.Sample{fail(sample.ErrHTTPStatus, 400, "a"), fail(sample.ErrHTTPStatus, 400, "b"), fail(sample.ErrHTTPStatus, 400, "c"),
			fail(sample.ErrHTTPStatus, 400, "d"), fail(sample.ErrHTTPStatus, 400, "e"), fail(sample.ErrHTTPStatus, 400, "f"), fail(sample.ErrHTTPStatus, 400, "g")},
			[]string{"1× HTTP 400: a (http_status)", "1× HTTP 400: b (http_status)", "1× HTTP 400: c (http_status)", "1× HTTP 400: d (http_status)", "1× HTTP 400: e (http_status)", "2× other messages"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			samples := []sample.Sample{req(0, 2, 0, []float64{10}, 5, 1), req(1, 2, 0, []float64{10}, 5, 1)}
			for k, f := range tc.failures {
				samples = append(samples, f(2+k))
			}
			s, err := Summarize(samples, t0, t0.Add(time.Second), SLO{})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.ErrorLines(0); !slices.Equal(got, tc.want) {
				t.Errorf("ErrorLines = %q, want %q", got, tc.want)
			}
			if s.OtherErrors != tc.wantOther {
				t.Errorf("OtherErrors = %d, want %d", s.OtherErrors, tc.wantOther)
			}
		})
	}
	// Clipped lines end with an ellipsis and keep their width.
	s, err := Summarize([]sample.Sample{req(0, 2, 0, []float64{10}, 5, 1), failedWith(1, sample.ErrHTTPStatus, 400, long)}, t0, t0.Add(time.Second), SLO{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.ErrorLines(20)[0]; len([]rune(got)) != 20 || !strings.HasSuffix(got, "…") {
		t.Errorf("clipped line %q", got)
	}
}
