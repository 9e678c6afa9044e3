package engine

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestGuidedDecoding: a guided request ends with EOS ("stop") once its
// grammar is complete (StopAfter tokens), unless max_tokens comes first;
// and each guided sequence adds GuidedOverhead to every step it samples
// in, so a guided request's TPOT exceeds a free one's by it.
func TestGuidedDecoding(t *testing.T) {
	const overhead = 3 * time.Millisecond
	cfg := Defaults(Config{Jitter: 0, ColdStart: 0, GuidedOverhead: overhead})
	prompt := make([]int32, 64)
	for _, tc := range []struct {
		name              string
		req               Request
		tokens            int
		reason            string
		slowerThanFreeTPO bool
	}{
		{"free", Request{PromptTokens: prompt, MaxTokens: 20, IgnoreEOS: true}, 20, "length", false},
		{"guided", Request{PromptTokens: prompt, MaxTokens: 40, Guided: true, StopAfter: 19}, 20, "stop", true},
		{"guided, cut", Request{PromptTokens: prompt, MaxTokens: 10, Guided: true, StopAfter: 19}, 10, "length", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, cfg, prometheus.NewRegistry())
			tc.req.ID = tc.name
			s.run([]simReq{{req: tc.req}}, nil)
			rec := s.recs[0]
			if rec.tokens != tc.tokens || rec.reason != tc.reason {
				t.Errorf("%d tokens, %s: want %d, %s", rec.tokens, rec.reason, tc.tokens, tc.reason)
			}
			free := newSim(t, cfg, prometheus.NewRegistry())
			free.run([]simReq{{req: Request{ID: "f", PromptTokens: prompt, MaxTokens: 20, IgnoreEOS: true}}}, nil)
			gap := rec.tpot() - free.recs[0].tpot()
			if want := time.Duration(0); tc.slowerThanFreeTPO {
				want = overhead
				if gap < want-time.Microsecond || gap > want+time.Microsecond {
					t.Errorf("TPOT %v vs free %v: want %v more", rec.tpot(), free.recs[0].tpot(), want)
				}
			} else if gap != 0 {
				t.Errorf("a free request's TPOT moved by %v", gap)
			}
		})
	}
}
