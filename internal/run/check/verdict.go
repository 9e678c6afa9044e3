package check

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vllmperf/vllmperf/internal/run/result"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/run/stats"
	"github.com/vllmperf/vllmperf/internal/vocab/exitstatus"
)

// RunLimits are a command's limits on a run's requests, with the flags
// that set them, for the messages.
type RunLimits struct {
	MaxErrorRate  float64 // a fraction of the measured requests
	ErrorRateFlag string  // the flag of MaxErrorRate: --max-error-rate
	MaxStreak     int     // load.Config.MaxConsecutiveFailures
	StreakFlag    string  // the flag of MaxStreak: --max-consecutive-failures
	// OverloadFlag turns the overload stop off (--no-overload-stop).
	OverloadFlag string
	// KeyError says where the refused API key came from.
	KeyError error
	// Saved lists the files the partial results of an interrupted run
	// went to.
	Saved []string
}

// Judge says what was wrong with a finished run, in the one run-verdict
// policy of vllmperf run (the suite's requests check weighs the same
// rules: Ended, ErrorRate, stats.Summary.Inconclusive). Most serious
// first, the first one setting the exit status (package exitstatus): an
// interruption (ctx's cause), a server that went down, an early stop, a
// error rate above the limit, a refused key, and last an inconclusive
// result.
func Judge(ctx context.Context, res *result.Result, l RunLimits) []error {
	var out []error
	if res.Load.Canceled {
		saved := ""
		if len(l.Saved) > 0 {
			saved = " and in " + strings.Join(l.Saved, ", ")
		}
		cause := exitstatus.Cause(ctx)
		out = append(out, exitstatus.InterruptedError{Cause: cause, Msg: fmt.Sprintf("interrupted (%v) after %d requests (%d cut short, counted apart from failures): partial results above%s",
			cause, len(res.Samples()), res.Summary.Interrupted, saved)})
	}
	for _, e := range Ended(res) {
		if e == error(res.Load.Streak) && l.StreakFlag != "" {
			e = fmt.Errorf("%w (%s %d; 0 never stops early)", e, l.StreakFlag, l.MaxStreak)
		}
		if e == error(res.Load.Overload) && l.OverloadFlag != "" {
			e = fmt.Errorf("%w; lower the rate, or run it to the end anyway with %s", e, l.OverloadFlag)
		}
		out = append(out, e)
	}
	if err := OverErrorRate(res.Summary, l.MaxErrorRate, l.ErrorRateFlag); err != nil {
		out = append(out, err)
	}
	if res.Summary.FailedByKind[sample.ErrAuth] > 0 && l.KeyError != nil {
		out = append(out, l.KeyError)
	}
	if reason, bad := res.Summary.Inconclusive(); bad {
		out = append(out, exitstatus.Inconclusive(reason))
	}
	return out
}

// Ended lists what ended the run badly, in the one run-verdict policy of
// the suite's requests check and vllmperf run: the server went down, the
// run stopped early on a streak of identical failures, or it stopped on
// the overload rule's verdict. Each fails the run, before its error rate or
// a lack of successes is weighed.
func Ended(res *result.Result) []error {
	var out []error
	if res.ServerDown != nil {
		out = append(out, res.ServerDown)
	}
	if st := res.Load.Streak; st != nil {
		out = append(out, st)
	}
	if v := res.Load.Overload; v != nil {
		out = append(out, v)
	}
	return out
}

// ErrorRate is the one rule on failed requests, the suite's requests
// check's and vllmperf run's: the share of the measured requests that
// failed (err-%'s failed / sent, interrupted ones counted apart), over
// when above limit (a fraction).
func ErrorRate(s *stats.Summary, limit float64) (rate float64, over bool) {
	if s.Requests == 0 {
		return 0, false
	}
	rate = float64(s.Failed) / float64(s.Requests)
	return rate, rate > limit
}

// OverErrorRate is ErrorRate's verdict in words for a command whose
// limit is the flag named: nil when the rate is within it, else the rate,
// the most common failure and an example of it.
func OverErrorRate(s *stats.Summary, limit float64, flag string) error {
	rate, over := ErrorRate(s, limit)
	if !over {
		return nil
	}
	var top sample.ErrorKind
	for k, n := range s.FailedByKind {
		if n > s.FailedByKind[top] || (n == s.FailedByKind[top] && k < top) {
			top = k
		}
	}
	msg := fmt.Sprintf("error rate %.1f%% (%d of %d measured requests failed) is above %s %s; most failed with %s (%d)",
		100*rate, s.Failed, s.Requests, flag, strconv.FormatFloat(100*limit, 'f', -1, 64)+"%", top, s.FailedByKind[top])
	if e, ok := s.ErrorExamples[top]; ok {
		msg += ", e.g. " + e.Detail()
	}
	return errors.New(msg)
}
