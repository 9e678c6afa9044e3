package stats

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func msd(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// req builds a successful sample sent at sentMS after t0 (scheduled
// queueMS earlier), with content chunks at the given offsets from Sent.
func req(index int, sentMS, queueMS float64, chunksMS []float64, prompt, completion int) sample.Sample {
	s := sample.Sample{
		Index:            index,
		Scheduled:        t0.Add(msd(sentMS - queueMS)),
		Sent:             t0.Add(msd(sentMS)),
		PromptTokens:     prompt,
		CompletionTokens: completion,
	}
	for _, c := range chunksMS {
		s.Chunks = append(s.Chunks, sample.Chunk{At: msd(c)})
	}
	last := 0.0
	if len(chunksMS) > 0 {
		last = chunksMS[len(chunksMS)-1]
	}
	s.Done = s.Sent.Add(msd(last + 1))
	return s
}

func failed(index int, sentMS float64, kind sample.ErrorKind) sample.Sample {
	s := req(index, sentMS, 0, nil, 10, 0)
	s.Fail(kind, 0, "boom")
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestSummarize(t *testing.T) {
	t.Parallel()
	warm := req(0, 0, 0, []float64{300, 310}, 100, 2) // cold, warm-up
	warm.Warmup = true
	samples := []sample.Sample{
		warm,
		req(1, 1000, 0, []float64{40, 50, 60, 70}, 100, 4), // TTFT 40, TPOT 10, ITL 10 10 10
		req(2, 1000, 5, []float64{60, 80, 100}, 200, 5),    // TTFT 60, TPOT 40/4 = 10, ITL 20 20
		req(3, 1100, 15, []float64{20}, 50, 1),             // one token: no TPOT, no ITL
		failed(4, 1200, sample.ErrTimeout),                 // failed: counts, no latencies
	}
	start, end := t0.Add(time.Second), t0.Add(3*time.Second)
	s, err := Summarize(samples, start, end, SLO{TTFT: msd(50)})
	if err != nil {
		t.Fatal(err)
	}
	ints := []struct {
		name      string
		got, want int
	}{
		{"Requests", s.Requests, 4},
		{"Completed", s.Completed, 3},
		{"Failed", s.Failed, 1},
		{"FailedByKind[timeout]", s.FailedByKind[sample.ErrTimeout], 1},
		{"TotalInputTokens", s.TotalInputTokens, 350},
		{"TotalOutputTokens", s.TotalOutputTokens, 10},
		{"GoodRequests", s.GoodRequests, 2},                   // TTFT 40 and 20 ≤ 50; 60 > 50
		{"MaxConcurrentRequests", s.MaxConcurrentRequests, 2}, // requests 2 and 3 overlap in 1100–1101 ms
		{"TTFT.N", s.TTFT.N, 3},
		{"TPOT.N", s.TPOT.N, 2},
		{"ITL.N", s.ITL.N, 5},
		{"ITL.Sources", s.ITL.Sources, 2},
		{"E2EL.N", s.E2EL.N, 3},
		{"QueueTime.N", s.QueueTime.N, 4},
	}
	for _, c := range ints {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
	floats := []struct {
		name      string
		got, want float64
	}{
		{"Duration", s.Duration.Seconds(), 2},
		{"RequestThroughput", s.RequestThroughput, 1.5},
		{"OutputThroughput", s.OutputThroughput, 5},
		{"TotalTokenThroughput", s.TotalTokenThroughput, 180},
		{"RequestGoodput", s.RequestGoodput, 1},
		{"TTFT.Mean", s.TTFT.Mean, 40},
		{"TTFT.Median", s.TTFT.Median, 40},
		{"TTFT.Std", s.TTFT.Std, math.Sqrt(800.0 / 3)},
		{"TTFT.Min", s.TTFT.Min, 20},
		{"TTFT.Max", s.TTFT.Max, 60},
		{"TPOT.Mean", s.TPOT.Mean, 10},
		{"ITL.Mean", s.ITL.Mean, 14},
		{"ITL.Median", s.ITL.Median, 10},
		{"E2EL.Mean", (s.E2EL.Mean), (70 + 100 + 20) / 3.0},
		{"QueueTime.Max", s.QueueTime.Max, 15},
		{"ColdTTFT", s.ColdTTFT, 300},
	}
	for _, c := range floats {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if p, _ := s.TTFT.Pct(90); !near(p, 56) { // sorted 20 40 60, h = 1.8
		t.Errorf("TTFT p90 = %v, want 56", p)
	}
	if !s.ColdTTFTOK {
		t.Error("ColdTTFTOK false")
	}
	if r, inc := s.Inconclusive(); inc {
		t.Errorf("Inconclusive: %s", r)
	}
	// Warnings: the failure and too few samples for p90+ on every metric.
	var text []string
	for _, w := range s.Warnings {
		text = append(text, w.Error())
	}
	all := strings.Join(text, "\n")
	for _, want := range []string{"1 of 4 measured requests failed (1 timeout)", "ttft: percentiles rest on 3 requests (p90 needs ≥10", "itl: percentiles rest on 2 requests"} {
		if !strings.Contains(all, want) {
			t.Errorf("warnings lack %q:\n%s", want, all)
		}
	}
}

func TestGoodput(t *testing.T) {
	t.Parallel()
	samples := []sample.Sample{
		req(0, 0, 0, []float64{100, 200, 300}, 10, 3), // TTFT 100, TPOT 100, E2EL 300
		req(1, 0, 0, []float64{50, 60, 70}, 10, 3),    // TTFT 50, TPOT 10, E2EL 70
		req(2, 0, 0, []float64{500}, 10, 1),           // TTFT 500, one token: TPOT passes
		req(3, 0, 0, nil, 10, 0),                      // no content: fails TTFT and E2EL limits
		failed(4, 0, sample.ErrHTTPStatus),            // failed: never good
	}
	tests := []struct {
		name string
		slo  SLO
		want int
	}{
		{"ttft only", SLO{TTFT: msd(100)}, 2},                                // 100 and 50 (≤ is good)
		{"tpot only", SLO{TPOT: msd(50)}, 3},                                 // 10, one-token, and no-content (no TPOT)
		{"e2el only", SLO{E2EL: msd(400)}, 2},                                // 300, 70; 500 is over
		{"all three", SLO{TTFT: msd(600), TPOT: msd(50), E2EL: msd(600)}, 2}, // request 1 and 2
		{"tight", SLO{TTFT: msd(1)}, 0},                                      // nobody
	}
	for _, tt := range tests {
		s, err := Summarize(samples, t0, t0.Add(time.Second), tt.slo)
		if err != nil {
			t.Fatal(err)
		}
		if s.GoodRequests != tt.want || !near(s.RequestGoodput, float64(tt.want)) {
			t.Errorf("%s: GoodRequests = %d, goodput %v, want %d", tt.name, s.GoodRequests, s.RequestGoodput, tt.want)
		}
	}
	s, _ := Summarize(samples, t0, t0.Add(time.Second), SLO{})
	if s.GoodRequests != 0 || s.RequestGoodput != 0 || s.SLO.Set() {
		t.Error("goodput computed without an SLO")
	}
}

func TestInconclusive(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	tests := []struct {
		name    string
		samples []sample.Sample
		end     time.Time
		want    string // substring of the reason
	}{
		// Nothing measured at all.
		{"no samples", nil, t0.Add(time.Second), "no measured request was sent"},
		// Only warm-up requests.
		{"warm-up only", []sample.Sample{{Index: 0, Warmup: true}}, t0.Add(time.Second), "no measured request was sent"},
		// Every request failed.
		{"all failed", []sample.Sample{failed(0, 0, sample.ErrConnection), failed(1, 0, sample.ErrConnection), failed(2, 0, sample.ErrRateLimited)}, t0.Add(time.Second), "all 3 failed (2 connection, 1 rate_limited)"},
		// Requests succeeded but start == end.
		{"zero duration", []sample.Sample{req(0, 0, 0, []float64{1}, 1, 1)}, t0, "zero duration"},
	}
	for _, tt := range tests {
		s, err := Summarize(tt.samples, t0, tt.end, SLO{})
		if err != nil {
			t.Fatal(err)
		}
		reason, inc := s.Inconclusive()
		if !inc || !strings.Contains(reason, tt.want) {
			t.Errorf("%s: Inconclusive() = %q, %v, want a reason containing %q", tt.name, reason, inc, tt.want)
		}
		if len(s.Warnings) == 0 {
			t.Errorf("%s: no warning", tt.name)
		}
	}
	s, _ := Summarize([]sample.Sample{failed(0, 0, sample.ErrTimeout)}, t0, t0.Add(time.Second), SLO{})
	if !errors.Is(s.Warnings[0], ErrNoSuccess) {
		t.Errorf("all-failed warning %v is not ErrNoSuccess", s.Warnings[0])
	}
}

func TestFewSamplesWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n        int
		wantPcts []float64 // percentiles warned about for ttft
	}{
		{9, []float64{90, 95, 99, 99.9}}, // below 10: p90 up
		{10, []float64{95, 99, 99.9}},    // p90 now supported, p95 needs 20
		{100, []float64{99.9}},           // only p99.9
		{1000, nil},                      // all supported
	}
	for _, tt := range tests {
		var samples []sample.Sample
		for i := range tt.n {
			samples = append(samples, req(i, float64(i), 0, []float64{10, 20}, 1, 2))
		}
		s, err := Summarize(samples, t0, t0.Add(10*time.Second), SLO{})
		if err != nil {
			t.Fatal(err)
		}
		var got []float64
		for _, w := range s.Warnings {
			var few *FewSamplesWarning
			if errors.As(w, &few) && few.Metric == "ttft" {
				if few.N != tt.n {
					t.Errorf("n=%d: warning counts %d", tt.n, few.N)
				}
				got = few.Pcts
			}
		}
		if len(got) != len(tt.wantPcts) {
			t.Errorf("n=%d: warned about %v, want %v", tt.n, got, tt.wantPcts)
			continue
		}
		for i := range got {
			if got[i] != tt.wantPcts[i] {
				t.Errorf("n=%d: warned about %v, want %v", tt.n, got, tt.wantPcts)
			}
		}
	}
}

func TestNoUsageWarning(t *testing.T) {
	t.Parallel()
	s, _ := Summarize([]sample.Sample{req(0, 0, 0, []float64{1, 2}, 0, 0)}, t0, t0.Add(time.Second), SLO{})
	found := false
	for _, w := range s.Warnings {
		found = found || strings.Contains(w.Error(), "no usage.completion_tokens")
	}
	if !found {
		t.Errorf("no warning for missing usage: %v", s.Warnings)
	}
}

func TestSummarizeErrors(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	tests := []struct {
		name string
		end  time.Time
		slo  SLO
		want string
	}{
		// The bounds reversed.
		{"end before start", t0.Add(-time.Second), SLO{}, "is before start"},
		// A negative limit is a mistake, not "no limit".
		{"negative slo", t0.Add(time.Second), SLO{TPOT: -time.Millisecond}, "negative limit"},
	}
	for _, tt := range tests {
		if _, err := Summarize(nil, t0, tt.end, tt.slo); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestMaxConcurrent(t *testing.T) {
	t.Parallel()
	iv := func(from, to float64) *sample.Sample {
		return &sample.Sample{Sent: t0.Add(msd(from)), Done: t0.Add(msd(to))}
	}
	tests := []struct {
		name string
		xs   []*sample.Sample
		want int
	}{
		{"none", nil, 0}, // no requests
		{"back to back", []*sample.Sample{iv(0, 10), iv(10, 20)}, 1}, // touching ends do not overlap
		{"nested", []*sample.Sample{iv(0, 100), iv(10, 20), iv(15, 30)}, 3},
		{"never sent", []*sample.Sample{{}, iv(0, 1)}, 1}, // a sample without Sent is skipped
	}
	for _, tt := range tests {
		if got := maxConcurrent(tt.xs); got != tt.want {
			t.Errorf("%s: maxConcurrent = %d, want %d", tt.name, got, tt.want)
		}
	}
}
