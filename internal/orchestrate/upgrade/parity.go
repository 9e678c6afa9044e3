package upgrade

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/vllmperf/vllmperf/internal/orchestrate/parity"
	"github.com/vllmperf/vllmperf/internal/outfile"
	"github.com/vllmperf/vllmperf/internal/request/openai"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// ParityFile is the file Publish writes the output parity per point to,
// next to gate.txt.
const ParityFile = "parity.txt"

// parityServer is a session that can answer parity requests: the suite's
// (a test's fake sessions cannot, and are left out of the check).
type parityServer interface {
	// parityClient is a client of the session's server and its served
	// model.
	parityClient() (*openai.Client, string)
}

// parityRun collects each side's greedy outputs once per profile, on the
// side's first server of the profile, before its first block of runs
// (the server is idle then: a point's prompts are its first batch), and
// compares a point's outputs once both sides have them.
type parityRun struct {
	set     thresholds.Parity
	log     io.Writer
	done    map[string]bool                // side/profile collected
	outputs map[string]*[2][]parity.Output // by target name
	report  *parity.Report
}

// newParityRun returns the check of thresholds.yaml's parity:, or nil when
// it sends no prompts.
func newParityRun(th *thresholds.Set, log io.Writer) *parityRun {
	set := thresholds.DefaultParity
	if th != nil {
		set = th.Parity()
	}
	if set.Prompts <= 0 {
		return nil
	}
	return &parityRun{set: set, log: log, done: map[string]bool{}, outputs: map[string]*[2][]parity.Output{},
		report: &parity.Report{Settings: set}}
}

// collect sends the parity requests of profile's targets to side's server
// s, unless that side's outputs of the profile are in already.
func (p *parityRun) collect(ctx context.Context, side int, profile string, s session, targets []Target) error {
	key := sideNames[side] + "/" + profile
	if p == nil || p.done[key] {
		return nil
	}
	p.done[key] = true
	src, ok := s.(parityServer)
	if !ok {
		return nil
	}
	c, model := src.parityClient()
	defer c.CloseIdleConnections()
	tok := func(ctx context.Context, text string) (int, error) { return c.TokenizeText(ctx, model, text) }
	for _, t := range targets {
		reqs, err := parity.Requests(model, t.Point, p.set)
		if err != nil {
			return err
		}
		outs, err := parity.Collect(ctx, c, reqs)
		if err != nil {
			return fmt.Errorf("%s, %s: output parity: %w", strings.ToUpper(sideNames[side]), t.Name, err)
		}
		pair := p.outputs[t.Name]
		if pair == nil {
			pair = &[2][]parity.Output{}
			p.outputs[t.Name] = pair
		}
		pair[side] = outs
		if pair[oldSide] == nil || pair[newSide] == nil {
			continue
		}
		pt, err := parity.Compare(ctx, t.Name, pair[oldSide], pair[newSide], tok)
		if err != nil {
			return err
		}
		p.report.Points = append(p.report.Points, pt)
		fmt.Fprintf(p.log, "upgrade-gate: parity %s: %d of %d greedy outputs identical, first differences at %v\n", t.Name, pt.Identical, pt.Outputs, pt.FirstDiff)
	}
	return nil
}

// result is the comparison so far (nil without a parity check).
func (p *parityRun) result() *parity.Report {
	if p == nil {
		return nil
	}
	return p.report
}

// ParityLine is the output parity check's one-line verdict, "" without
// one: the summary, then PASS or FAIL with the reasons.
func (r *Result) ParityLine() string {
	if r.Parity == nil {
		return ""
	}
	if len(r.ParityFailures) == 0 {
		return fmt.Sprintf("%s: %s", r.Parity.Summary(), verdict.Pass)
	}
	return fmt.Sprintf("%s: %s: %s", r.Parity.Summary(), verdict.Fail, strings.Join(r.ParityFailures, "; "))
}

// The files the gate's report is written to next to old.txt and new.txt.
const (
	ReportText = "gate.txt"
	ReportJSON = "gate.json"
)

// WriteParity writes the check's verdict and a line per point to path.
func (r *Result) WriteParity(path string) error {
	if r.Parity == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintln(&b, r.ParityLine())
	set := r.Parity.Settings
	fmt.Fprintf(&b, "settings: %d prompts per point, max_tokens %d, min_identical %g%%, early_tokens %d, max_early %g%%\n",
		set.Prompts, set.MaxTokens, 100*set.MinIdentical, set.EarlyTokens, 100*set.MaxEarly)
	for _, p := range r.Parity.Points {
		fmt.Fprintf(&b, "%s: %d of %d identical; first differing position of the others: %v\n", p.Name, p.Identical, p.Outputs, p.FirstDiff)
	}
	return outfile.ReplaceBytes(path, 0o644, []byte(b.String()))
}
