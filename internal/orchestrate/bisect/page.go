package bisect

import (
	"fmt"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/results/report"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// WritePage writes the bisection's report page (report.BisectFile) into
// dir and returns its path; candidates names the candidate file.
func (r *Result) WritePage(dir, candidates string) (string, error) {
	return report.WriteBisect(dir, r.page(candidates))
}

func (r *Result) page(candidates string) *report.Bisect {
	p := &report.Bisect{Candidates: candidates, Good: r.Candidates[0].Text, Headline: r.Headline(), Status: string(verdict.Inconclusive),
		Prediction: r.Prediction.String(), Elapsed: r.Elapsed.Round(time.Millisecond).String()}
	if r.Found() {
		p.Status = string(verdict.Pass)
	}
	known := map[int]Step{}
	for _, st := range r.Steps {
		known[st.Index] = st
		ev := st.Headline
		if st.Reused {
			ev = "reused runs, compared again: " + ev
		}
		p.Steps = append(p.Steps, report.BisectStep{N: st.N, Line: st.Line, Pairs: st.Pairs, Build: st.Build, Verdict: string(st.Verdict),
			Status: verdictStatus(st.Verdict), Evidence: ev, Parity: st.Parity, Time: st.Elapsed.Round(time.Millisecond).String(), Dir: st.Dir})
	}
	for i, c := range r.Candidates {
		b := report.BisectBuild{Line: c.Line, Build: c.Text}
		st, ok := known[i]
		switch {
		case i == r.FirstBad:
			b.Known, b.Status = fmt.Sprintf("the first bad build (step %d: %s)", st.N, st.Verdict), string(verdict.Fail)
		case ok:
			b.Known, b.Status = fmt.Sprintf("%s (step %d)", st.Verdict, st.N), verdictStatus(st.Verdict)
		case i == 0:
			b.Known, b.Status = "known good (the reference of every step)", string(verdict.Pass)
		case i < r.Range[0]:
			b.Known, b.Status = "good (before a good build)", string(verdict.Pass)
		case i > r.Range[1]:
			b.Known, b.Status = "bad (after a bad build)", string(verdict.Fail)
		case i == len(r.Candidates)-1:
			b.Known, b.Status = "known bad (as the file says)", string(verdict.Fail)
		default:
			b.Known, b.Status = "not tested: "+strings.TrimSpace(rangeNote(r)), string(verdict.Inconclusive)
		}
		p.Builds = append(p.Builds, b)
	}
	return p
}

func rangeNote(r *Result) string {
	if r.Found() {
		return ""
	}
	return r.Reason
}

func verdictStatus(v Verdict) string {
	switch v {
	case Good:
		return string(verdict.Pass)
	case Bad:
		return string(verdict.Fail)
	}
	return string(verdict.Inconclusive)
}
