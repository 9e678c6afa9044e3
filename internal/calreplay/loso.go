package calreplay

import (
	"cmp"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/strictyaml"
	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// Leave-one-source-out cross-validation: every source's fit rows are
// predicted by a fit on the other sources' fit rows only, and the summed
// error of those predictions (the held-out loss) is the objective that
// chooses how the shipped costs are fitted (Select: the prior weight).
// Every fit, the full one and each fold, starts from presets.NominalCosts,
// so no fold starts from a point fitted on the source it holds out. The
// fits are slow (minutes each), so `make fit` runs them (TestFit -fit
// all) and writes their costs to loso.yaml; `make calibrate` replays each
// fit row with its fold's costs beside the shipped presets' (in-sample)
// ones. The check rows take part in no fold: they are replayed only with
// the shipped presets, as the final check.

//go:embed loso.yaml
var losoYAML []byte

// losoPath is loso.yaml from the package directory (TestFit writes it).
const losoPath = "loso.yaml"

// Fold is one fit: the fit rows it was fitted on and the costs it found.
// The full fit holds out nothing; a fold holds out one source's rows.
type Fold struct {
	// Source is the held-out source's id (empty for the full fit).
	Source string `yaml:"source"`
	// Rows are the ids of the fit rows the fold was fitted on.
	Rows []string `yaml:"rows"`
	// Loss is the fit's loss on Rows.
	Loss float64 `yaml:"loss"`
	// Costs are the costs found, figure by figure (presets.CostRanges' names).
	Costs map[string]string `yaml:"costs"`
}

// LOSO is loso.yaml: every prior weight tried with its folds and held-out
// loss, the one chosen (the least held-out loss), and the full fit with it
// (FittedCosts must equal its costs).
type LOSO struct {
	// Prior is the chosen prior weight (FitOptions.Prior).
	Prior      float64     `yaml:"prior"`
	Candidates []Candidate `yaml:"candidates"`
	Full       Fold        `yaml:"full"`
}

// Candidate is one prior weight's cross-validation: a fold per source with
// fit rows, each fitted without that source's rows, and the held-out loss.
type Candidate struct {
	Prior float64 `yaml:"prior"`
	// HeldOutLoss sums, over every fit row, FitLoss of the row replayed
	// with the costs of the fold that held its source out (no prior term).
	HeldOutLoss float64 `yaml:"held_out_loss"`
	Folds       []Fold  `yaml:"folds"`
}

// ReadLOSO reads the embedded loso.yaml strictly.
func ReadLOSO() (LOSO, error) {
	var l LOSO
	err := strictyaml.Decode("internal/calreplay/loso.yaml", losoYAML, &l)
	return l, err
}

// Chosen is the candidate of the chosen prior weight.
func (l LOSO) Chosen() (Candidate, bool) {
	for _, c := range l.Candidates {
		if c.Prior == l.Prior {
			return c, true
		}
	}
	return Candidate{}, false
}

// Fold returns the chosen candidate's fold that holds out source.
func (l LOSO) Fold(source string) (Fold, bool) {
	c, _ := l.Chosen()
	for _, f := range c.Folds {
		if f.Source == source {
			return f, true
		}
	}
	return Fold{}, false
}

// CostsOf parses a fold's costs over start (the fields of presets.Costs
// that are no figure of presets.CostRanges keep start's values). A figure
// of CostRanges the fold does not name is an error: loso.yaml predates it,
// and replaying with start's value would pass off another fit's figure as
// the fold's.
func (f Fold) CostsOf(start presets.Costs) (presets.Costs, error) {
	c := start
	for _, cr := range presets.CostRanges {
		if _, ok := f.Costs[cr.Name]; !ok {
			return c, fmt.Errorf("fold %q has no figure %s: loso.yaml predates it (run make fit)", cmp.Or(f.Source, "full"), cr.Name)
		}
	}
	for name, text := range f.Costs {
		i := slices.IndexFunc(presets.CostRanges, func(cr presets.CostRange) bool { return cr.Name == name })
		if i < 0 {
			return c, fmt.Errorf("fold %q: no cost named %s", f.Source, name)
		}
		cr := presets.CostRanges[i]
		var v float64
		if cr.Duration() {
			d, err := time.ParseDuration(text)
			if err != nil {
				return c, fmt.Errorf("fold %q: %s: %v", f.Source, name, err)
			}
			v = float64(d)
		} else {
			x, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return c, fmt.Errorf("fold %q: %s: %v", f.Source, name, err)
			}
			v = x
		}
		cr.Set(&c, v)
	}
	return c, nil
}

// costsMap writes c figure by figure, as loso.yaml holds it.
func costsMap(c presets.Costs) map[string]string {
	out := map[string]string{}
	for _, cr := range presets.CostRanges {
		out[cr.Name] = ShowCost(cr, &c)
	}
	return out
}

// roundDur rounds a duration in nanoseconds to three significant digits.
func roundDur(ns float64) time.Duration {
	if ns <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(ns))-2)
	return time.Duration(math.Round(ns/p) * p)
}

// Rounded is c with every figure as loso.yaml writes it.
func Rounded(c presets.Costs) presets.Costs {
	r, _ := Fold{Costs: costsMap(c)}.CostsOf(c)
	return r
}

// FitSources groups the fit rows that replay by source id, sources in data
// order.
func FitSources(rows []calibration.Row) (order []string, bySource map[string][]calibration.Row) {
	bySource = map[string][]calibration.Row{}
	for _, rp := range Replayable(rows) {
		r := rp.Row
		if r.Split != calibration.Fit {
			continue
		}
		if _, ok := bySource[r.Source.ID]; !ok {
			order = append(order, r.Source.ID)
		}
		bySource[r.Source.ID] = append(bySource[r.Source.ID], r)
	}
	return order, bySource
}

// rowIDs lists the rows' ids.
func rowIDs(rows []calibration.Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}

// StaleFolds reports how loso.yaml no longer matches the calibration data:
// a fold fitted on other rows than the data's fit rows less its source's,
// a source without a fold, a chosen prior that is not the candidate with
// the least held-out loss, or FittedCosts other than the full fit's.
func (l LOSO) StaleFolds(rows []calibration.Row) []string {
	var out []string
	order, by := FitSources(rows)
	if got, want := strings.Join(l.Full.Rows, ","), strings.Join(rowIDs(trainRows(order, by, "")), ","); got != want {
		out = append(out, fmt.Sprintf("full fit on [%s], the fit rows are [%s]", got, want))
	}
	if c, err := l.Full.CostsOf(presets.FittedCosts); err != nil || c != presets.FittedCosts {
		out = append(out, fmt.Sprintf("presets.FittedCosts %+v differ from the full fit's %v (err %v)", presets.FittedCosts, l.Full.Costs, err))
	}
	if _, ok := l.Chosen(); !ok {
		out = append(out, fmt.Sprintf("no candidate with the chosen prior %g", l.Prior))
	}
	for _, c := range l.Candidates {
		out = append(out, c.stale(order, by)...)
	}
	if l.heldOut() != bestHeldOut(l.Candidates) {
		out = append(out, fmt.Sprintf("chosen prior %g has held-out loss %.3f, not the least (%.3f)", l.Prior, l.heldOut(), bestHeldOut(l.Candidates)))
	}
	return out
}

// stale reports the candidate's folds that do not match the data's fit rows.
func (c Candidate) stale(order []string, by map[string][]calibration.Row) []string {
	var out []string
	for _, s := range order {
		i := slices.IndexFunc(c.Folds, func(f Fold) bool { return f.Source == s })
		if i < 0 {
			out = append(out, fmt.Sprintf("prior %g: no fold for source %s", c.Prior, s))
			continue
		}
		if got, want := strings.Join(c.Folds[i].Rows, ","), strings.Join(rowIDs(trainRows(order, by, s)), ","); got != want {
			out = append(out, fmt.Sprintf("prior %g: fold %s fitted on [%s], want [%s]", c.Prior, s, got, want))
		}
	}
	if len(c.Folds) != len(order) {
		out = append(out, fmt.Sprintf("prior %g: %d folds for %d sources with fit rows", c.Prior, len(c.Folds), len(order)))
	}
	return out
}

// heldOut is the chosen candidate's held-out loss.
func (l LOSO) heldOut() float64 {
	c, _ := l.Chosen()
	return c.HeldOutLoss
}

// bestHeldOut is the least held-out loss among cs.
func bestHeldOut(cs []Candidate) float64 {
	best := math.Inf(1)
	for _, c := range cs {
		best = math.Min(best, c.HeldOutLoss)
	}
	return best
}

// trainRows are the fit rows of every source in order but skip ("": all).
func trainRows(order []string, by map[string][]calibration.Row, skip string) []calibration.Row {
	var out []calibration.Row
	for _, s := range order {
		if s != skip {
			out = append(out, by[s]...)
		}
	}
	return out
}
