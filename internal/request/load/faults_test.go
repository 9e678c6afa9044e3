package load

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The tests in this file are the load generator's rows of
// docs/reliability.md.

// scriptSender ends request i at once with outcome(i): nil for a success.
type scriptSender func(i int) *sample.Error

func (f scriptSender) Send(_ context.Context, _ openai.Request, s *sample.Sample) {
	s.Sent = time.Now()
	if e := f(s.Index); e != nil {
		s.Fail(e.Kind, e.Status, e.Message)
	} else {
		s.Chunks = []sample.Chunk{{At: time.Microsecond}}
		s.CompletionTokens = 1
	}
	s.Done = time.Now()
}

var (
	err500  = &sample.Error{Kind: sample.ErrHTTPStatus, Status: 500, Message: "engine dead"}
	err502  = &sample.Error{Kind: sample.ErrHTTPStatus, Status: 502, Message: "bad gateway"}
	errConn = &sample.Error{Kind: sample.ErrConnection, Message: "connection refused"}
	errCanc = &sample.Error{Kind: sample.ErrCanceled, Message: "canceled"}
)

func TestRow10_ConsecutiveFailuresStopRun(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	always := func(e *sample.Error) func(int) *sample.Error { return func(int) *sample.Error { return e } }
	tests := []struct {
		name        string
		cfg         Config // Concurrency 1: requests end in index order
		outcome     func(i int) *sample.Error
		wantSamples int
		wantStop    StopReason
		wantUnsent  int
	}{
		// Every request fails the same way: the run stops after 5, the
		// other 45 are never sent.
		{"all 500", Config{Requests: 50, MaxConsecutiveFailures: 5}, always(err500), 5, StopFailureStreak, 45},
		// A success every fourth request breaks each run of failures.
		{"successes between", Config{Requests: 50, MaxConsecutiveFailures: 5}, func(i int) *sample.Error {
			if i%4 == 3 {
				return nil
			}
			return err500
		}, 50, StopFinished, 0},
		// Same kind, alternating status: not identical.
		{"500 and 502", Config{Requests: 50, MaxConsecutiveFailures: 5}, func(i int) *sample.Error {
			return []*sample.Error{err500, err502}[i%2]
		}, 50, StopFinished, 0},
		// Alternating kind: not identical.
		{"500 and connection", Config{Requests: 50, MaxConsecutiveFailures: 5}, func(i int) *sample.Error {
			return []*sample.Error{err500, errConn}[i%2]
		}, 50, StopFinished, 0},
		// An interrupted request neither counts nor breaks the run: 500 ×3,
		// canceled, 500 ×2 is a run of 5.
		{"canceled in between", Config{Requests: 50, MaxConsecutiveFailures: 5}, func(i int) *sample.Error {
			if i == 3 {
				return errCanc
			}
			return err500
		}, 6, StopFailureStreak, 44},
		// 0 disables the check: all 50 fail and are sent.
		{"disabled", Config{Requests: 50}, always(err500), 50, StopFinished, 0},
		// Warm-up failures count: the measured phase never starts.
		{"during warm-up", Config{Requests: 50, Warmup: 10, MaxConsecutiveFailures: 5}, always(err500), 5, StopFailureStreak, 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := tt.cfg
			cfg.Concurrency = 1
			res, err := Run(context.Background(), cfg, scriptSender(tt.outcome), func(int) openai.Request { return openai.Request{} })
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Samples); got != tt.wantSamples {
				t.Errorf("%d samples, want %d", got, tt.wantSamples)
			}
			if res.Stop != tt.wantStop {
				t.Errorf("Stop = %v, want %v", res.Stop, tt.wantStop)
			}
			if tt.wantStop != StopFailureStreak {
				if res.Streak != nil {
					t.Errorf("Streak = %v, want nil", res.Streak)
				}
				return
			}
			if res.Streak == nil {
				t.Fatal("Streak nil for a failure-streak stop")
			}
			if res.Streak.Count != 5 || res.Streak.Err != *err500 || res.Streak.Unsent != tt.wantUnsent {
				t.Errorf("Streak = %+v, want 5 × %v with %d unsent", *res.Streak, err500, tt.wantUnsent)
			}
			want := fmt.Sprintf("stopped early after 5 consecutive identical failures (http_status (HTTP 500): engine dead); %d requests not sent", tt.wantUnsent)
			if got := res.Streak.Error(); got != want {
				t.Errorf("Streak.Error() = %q, want %q", got, want)
			}
			if res.Canceled {
				t.Error("Canceled set, but nobody canceled")
			}
		})
	}
}

// TestRow10_FailingServerStopsRun runs the real client against a server
// that fails every request: the run stops at the limit instead of sending
// all 10,000, and the server saw exactly the requests in the samples.
func TestRow10_FailingServerStopsRun(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, `{"error":{"message":"EngineCore died","type":"InternalServerError","code":500}}`, http.StatusInternalServerError)
	}))
	t.Cleanup(srv.Close)
	client := openai.New(srv.URL)
	t.Cleanup(client.CloseIdleConnections)
	const limit, concurrency, requests = 20, 4, 10_000
	res, err := Run(context.Background(), Config{Concurrency: concurrency, Requests: requests, MaxConsecutiveFailures: limit}, client,
		func(int) openai.Request { return openai.Request{Model: "m", Prompt: "p"} })
	if err != nil {
		t.Fatal(err)
	}
	// The limit, plus at most the other requests in flight when it was hit.
	if n := len(res.Samples); n < limit || n > limit+concurrency-1 {
		t.Errorf("%d requests sent, want %d to %d", n, limit, limit+concurrency-1)
	}
	if got, want := hits.Load(), int64(len(res.Samples)); got != want {
		t.Errorf("server saw %d requests, samples %d", got, want)
	}
	if res.Stop != StopFailureStreak || res.Streak == nil {
		t.Fatalf("Stop = %v, Streak = %v, want a failure streak", res.Stop, res.Streak)
	}
	if s := res.Streak; s.Err.Kind != sample.ErrHTTPStatus || s.Err.Status != 500 || s.Unsent != requests-len(res.Samples) ||
		!strings.Contains(s.Error(), "EngineCore died") {
		t.Errorf("Streak = %+v (%v)", *s, s)
	}
}

// TestRow10_DurationRunStops checks a Duration-only run: it stops long
// before its hour is up and says how much was left.
func TestRow10_DurationRunStops(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	res, err := Run(context.Background(), Config{Rate: 1000, Burstiness: 1e9, Duration: time.Hour, MaxConsecutiveFailures: 3},
		scriptSender(func(int) *sample.Error { return errConn }), func(int) openai.Request { return openai.Request{} })
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopFailureStreak || res.Streak == nil || res.Streak.Unsent != 0 || res.Streak.Remaining < 59*time.Minute {
		t.Fatalf("Stop = %v, Streak = %+v, want a failure streak with most of the hour left", res.Stop, res.Streak)
	}
	if !strings.Contains(res.Streak.Error(), "of the run's duration left unused") {
		t.Errorf("Streak.Error() = %q", res.Streak.Error())
	}
	if res.Backlog != 0 {
		t.Errorf("Backlog = %d: arrivals not sent because the run stopped are not backlog", res.Backlog)
	}
}

// gateSender holds every request until its context ends, and reports
// each one that started on started.
type gateSender struct{ started chan<- int }

func (g gateSender) Send(ctx context.Context, _ openai.Request, s *sample.Sample) {
	s.Sent = time.Now()
	g.started <- s.Index
	<-ctx.Done()
	s.Fail(sample.ErrCanceled, 0, "canceled: "+context.Cause(ctx).Error())
	s.Done = time.Now()
}

func TestRow14_InterruptedRun(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
	}{
		// Canceled while dispatch waits for a slot.
		{"during dispatch", Config{Concurrency: 3, Requests: 100}},
		// Canceled after every request was dispatched, while all are in
		// flight: still an interruption.
		{"after dispatch", Config{Concurrency: 3, Requests: 3}},
		// A Duration run canceled before its deadline: not a grace cut.
		{"duration run", Config{Concurrency: 3, Duration: time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			started := make(chan int, 3)
			var wg sync.WaitGroup
			wg.Go(func() {
				for range 3 {
					<-started
				}
				cancel()
			})
			res, err := Run(ctx, tt.cfg, gateSender{started: started}, func(int) openai.Request { return openai.Request{} })
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != StopInterrupted || !res.Canceled || res.GraceCut != 0 {
				t.Errorf("Stop = %v, Canceled = %v, GraceCut = %d, want interrupted, true, 0", res.Stop, res.Canceled, res.GraceCut)
			}
			if len(res.Samples) != 3 {
				t.Fatalf("%d samples, want the 3 in flight", len(res.Samples))
			}
			for _, s := range res.Samples {
				if !s.Interrupted() || s.Failed() {
					t.Errorf("request %d: Err = %v, want an interruption, not a failure", s.Index, s.Err)
				}
			}
		})
	}
}

// TestRow13_GraceCutColdRequest reproduces `--duration 1s --grace 1s
// --max-tokens 200 --warmup 0` against a server slower than that: the
// first request streams chunks and is then cut by the grace period. The
// summary keeps its cold TTFT and says it was cut, instead of claiming it
// produced no first token.
func TestRow13_GraceCutColdRequest(t *testing.T) {
	testphase.Fault(t)
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 1; i <= 200; i++ { // one token at a time, until the client leaves
			_, err := fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"t\"}}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":%d}}\n\n", i)
			if err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	t.Cleanup(srv.Close)
	client := openai.New(srv.URL)
	t.Cleanup(client.CloseIdleConnections)
	res, err := Run(context.Background(), Config{Concurrency: 2, Duration: 50 * time.Millisecond, Grace: 200 * time.Millisecond}, client,
		func(int) openai.Request {
			return openai.Request{Model: "m", Prompt: "p", MaxTokens: 200, IgnoreEOS: true}
		})
	if err != nil {
		t.Fatal(err)
	}
	cold := res.Samples[0]
	if cold.Err == nil || cold.Err.Kind != sample.ErrGraceExpired || res.GraceCut != len(res.Samples) {
		t.Fatalf("request 0: Err = %v, GraceCut = %d of %d; want every request cut by the grace period", cold.Err, res.GraceCut, len(res.Samples))
	}
	sum, err := stats.Summarize(res.Samples, res.Start, res.End, stats.SLO{})
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, w := range sum.Warnings {
		text = append(text, w.Error())
	}
	all := strings.Join(text, "\n")
	if strings.Contains(all, "produced no first token") {
		t.Errorf("the old, wrong warning:\n%s", all)
	}
	// The first chunk comes at once, so it has arrived long before the
	// grace period ends; should a starved machine delay it past that, the
	// warning must still name the grace cut.
	want := fmt.Sprintf("did not complete (%v) after %d content chunks", cold.Err, len(cold.Chunks))
	if len(cold.Chunks) == 0 {
		want = fmt.Sprintf("ended before its first token (%v)", cold.Err)
	} else if !sum.ColdTTFTOK {
		t.Error("ColdTTFTOK false though the first request got chunks")
	}
	if !strings.Contains(all, want) {
		t.Errorf("warnings lack %q:\n%s", want, all)
	}
	if reason, inc := sum.Inconclusive(); !inc || !strings.Contains(reason, "grace_expired") {
		t.Errorf("Inconclusive() = %q, %v; want inconclusive naming grace_expired", reason, inc)
	}
}
