package perfgate

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/perf/benchfmt"

	vllmperf "github.com/vllmperf/vllmperf"
	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// priorEffects gives a plan without history (no earlier run on its key)
// the minimum detectable effects of the prior: the run-to-run spread of
// the committed simulator baseline (vllmperf.SimBaseline, the suite's
// profiles at quick size), per profile of the plan, at the plan's count.
// It is a prior, said as such: a real server's spread is known after the
// key's first run, which the next plan reads instead. Profiles the
// baseline does not hold are named in NoPrior.
func (p *Plan) priorEffects(set *thresholds.Set) error {
	in, err := input.Read(bytes.NewReader(vllmperf.SimBaseline), vllmperf.SimBaselineFile)
	if err != nil {
		return fmt.Errorf("the plan's prior spread: %w", err)
	}
	var gpu, size string
	held := map[string]bool{}
	var kept []*benchfmt.Result
	for _, r := range in.Results {
		bn, err := benchname.Parse(procs.ReplaceAllString(benchname.Short(string(r.Name)), ""))
		if err != nil || !slices.Contains(p.Profiles, bn.Profile) {
			continue
		}
		if gpu == "" {
			gpu, size = r.GetConfig("gpu"), r.GetConfig("size")
		}
		held[bn.Profile] = true
		kept = append(kept, r)
	}
	for _, prof := range p.Profiles {
		if !held[prof] {
			p.NoPrior = append(p.NoPrior, prof)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	in.Results = kept
	if p.MinimumEffects, err = gate.MinimumEffects(in, set, p.Count, p.Processes); err != nil {
		return fmt.Errorf("the plan's prior spread: %w", err)
	}
	p.SpreadFrom = fmt.Sprintf("the simulator baseline's spread (%s: %s, %s size); no run on this key yet", vllmperf.SimBaselineFile, gpu, size)
	return nil
}

// writeNoPrior names the profiles without a prior spread.
func (p *Plan) writeNoPrior(w io.Writer) error {
	if len(p.NoPrior) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "plan: no prior spread for %s (not in %s): the minimum detectable effect is known after the key's first run\n",
		strings.Join(p.NoPrior, ", "), vllmperf.SimBaselineFile)
	return err
}
