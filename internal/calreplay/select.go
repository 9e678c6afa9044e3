package calreplay

import (
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// FitPriors are the prior weights (FitOptions.Prior) that cross-validation
// chooses from: no pull toward the nominal costs, and one that costs a
// figure moved across its whole range as much as ten figures at the edge
// of their tolerance.
var FitPriors = []float64{0, 10}

// CrossValidate fits, with o, one fold per source of the fit rows (by,
// sources in order) on the other sources' rows, each from
// presets.NominalCosts, and sums over every fit row its loss replayed with
// the fold that held its source out.
func CrossValidate(order []string, by map[string][]calibration.Row, o FitOptions) (Candidate, error) {
	cand := Candidate{Prior: o.Prior}
	for _, s := range order {
		f, err := fitFold("without "+s, trainRows(order, by, s), o)
		if err != nil {
			return cand, err
		}
		f.Source = s
		c, err := f.CostsOf(presets.NominalCosts())
		if err != nil {
			return cand, err
		}
		held, err := FitLoss(by[s], c)
		if err != nil {
			return cand, err
		}
		if o.Logf != nil {
			o.Logf("prior %g: held-out loss of %s: %.3f", o.Prior, s, held)
		}
		cand.HeldOutLoss += held
		cand.Folds = append(cand.Folds, f)
	}
	return cand, nil
}

// Select chooses the prior weight among priors by leave-one-source-out
// cross-validation (the least held-out loss over every fit row) and fits
// the full costs on every fit row with it: loso.yaml's content.
func Select(rows []calibration.Row, priors []float64, o FitOptions) (LOSO, error) {
	order, by := FitSources(rows)
	if len(order) < 2 {
		return LOSO{}, fmt.Errorf("cross-validation needs fit rows of two sources or more, have %d", len(order))
	}
	var l LOSO
	for i, p := range priors {
		o.Prior = p
		c, err := CrossValidate(order, by, o)
		if err != nil {
			return l, err
		}
		l.Candidates = append(l.Candidates, c)
		if i == 0 || c.HeldOutLoss < l.heldOut() {
			l.Prior = p
		}
	}
	o.Prior = l.Prior
	full, err := fitFold("full", trainRows(order, by, ""), o)
	l.Full = full
	return l, err
}

// fitFold fits the costs on rows from presets.NominalCosts with o and
// returns them as loso.yaml holds a fold (rounded as written).
func fitFold(name string, rows []calibration.Row, o FitOptions) (Fold, error) {
	if logf := o.Logf; logf != nil {
		o.Logf = func(f string, a ...any) { logf(name+": "+f, a...) }
	}
	c, loss, err := Fit(rows, presets.NominalCosts(), o)
	if err != nil {
		return Fold{}, err
	}
	return Fold{Rows: rowIDs(rows), Loss: loss, Costs: costsMap(Rounded(c))}, nil
}

// SelectionSummary says which prior weights cross-validation tried, each
// one's held-out loss, and the one chosen.
func SelectionSummary(l LOSO) string {
	var b strings.Builder
	b.WriteString("Selection by leave-one-source-out cross-validation (make fit): prior weight → held-out loss over every fit row")
	for _, c := range l.Candidates {
		mark := ""
		if c.Prior == l.Prior {
			mark = " (chosen)"
		}
		fmt.Fprintf(&b, "; %g → %.1f%s", c.Prior, c.HeldOutLoss, mark)
	}
	b.WriteString(".\n")
	return b.String()
}
