package calreplay

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// The fit searches presets.Costs on fit rows: a deterministic coordinate
// descent inside presets.CostRanges (each figure in turn multiplied and
// divided by a step factor, a count moved by one, the change kept when the
// loss falls), until no change helps at the finest step. The loss sums,
// over the rows' compared figures, (error ÷ tolerance)² plus 4 × (excess
// over the tolerance)², so figures outside the tolerance weigh most; its
// replays run without noise (with noise, a small change of a figure moves
// the noise's draws to other steps and the loss jumps about).

// FitSteps are the coordinate descent's step factors, coarse to fine.
var FitSteps = []float64{1.3, 1.1}

// FitLoss replays rows with costs c, without noise, and sums the weighted
// errors. A check row is an error (ErrCheckRow).
func FitLoss(rows []calibration.Row, c presets.Costs) (float64, error) {
	type out struct {
		loss float64
		err  error
	}
	outs := make([]out, len(rows))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for i, r := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			zero := 0.0
			res, err := Replay(r, Options{Costs: &c, Jitter: &zero})
			if err != nil {
				outs[i].err = err
				return
			}
			for _, cmp := range Compare(res) {
				x := math.Abs(cmp.Error()) / cmp.Tolerance
				outs[i].loss += x*x + 4*math.Pow(math.Max(0, x-1), 2)
			}
		}()
	}
	wg.Wait()
	loss := 0.0
	for _, o := range outs {
		if o.err != nil {
			return 0, o.err
		}
		loss += o.loss
	}
	return loss, nil
}

// FitOptions steer a fit.
type FitOptions struct {
	// Params are the figures searched (nil: every one of presets.CostRanges).
	Params []string
	// Steps are the coordinate descent's step factors (nil: FitSteps).
	Steps []float64
	// Prior is the weight of the pull toward each figure's nominal value
	// (presets.CostRange.Nominal): Prior × ((v − nominal) ÷ (max − min))²
	// per figure is added to the rows' loss. 0: none. Which weight is used
	// is chosen by cross-validation (FitPriors, Select).
	Prior float64
	// Logf, if set, is told each improvement.
	Logf func(format string, args ...any)
}

// PriorPenalty is the prior's term of the fit's objective for c.
func PriorPenalty(c presets.Costs, prior float64) float64 {
	if prior == 0 {
		return 0
	}
	p := 0.0
	for _, cr := range presets.CostRanges {
		x := (cr.Get(&c) - cr.Nominal) / (cr.Max - cr.Min)
		p += x * x
	}
	return prior * p
}

// Fit searches the costs, starting at start, that minimise FitLoss on rows
// plus the prior's PriorPenalty (fit rows only: a check row is an error),
// and returns them with that objective.
func Fit(rows []calibration.Row, start presets.Costs, o FitOptions) (presets.Costs, float64, error) {
	for _, r := range rows {
		if r.Split != calibration.Fit {
			return start, 0, fmt.Errorf("row %s: %w", r.ID, ErrCheckRow)
		}
	}
	var ranges []presets.CostRange
	for _, cr := range presets.CostRanges {
		if o.Params == nil || contains(o.Params, cr.Name) {
			ranges = append(ranges, cr)
		}
	}
	if len(ranges) == 0 {
		return start, 0, fmt.Errorf("no cost named %v (have: %v)", o.Params, costNames())
	}
	if o.Steps == nil {
		o.Steps = FitSteps
	}
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	objective := func(c presets.Costs) (float64, error) {
		l, err := FitLoss(rows, c)
		return l + PriorPenalty(c, o.Prior), err
	}
	best := start
	for _, cr := range ranges { // start inside the ranges
		cr.Set(&best, math.Max(cr.Min, math.Min(cr.Max, cr.Get(&best))))
	}
	bestLoss, err := objective(best)
	if err != nil {
		return best, 0, err
	}
	logf("start: loss %.3f", bestLoss)
	for _, step := range o.Steps {
		for improved := true; improved; {
			improved = false
			for _, cr := range ranges {
				for _, up := range []bool{true, false} {
					moved, err := lineStep(cr, step, up, &best, &bestLoss, objective, logf)
					if err != nil {
						return best, 0, err
					}
					if moved {
						improved = true
						break // the other direction goes back to where the objective was higher
					}
				}
			}
		}
	}
	return best, bestLoss, nil
}

// lineStep moves one figure of *best by step in one direction for as long
// as the objective keeps falling (a line search along the coordinate: a
// figure whose best value lies many steps from its start gets there in one
// pass over the figures, not one step per pass), and reports whether it
// moved.
func lineStep(cr presets.CostRange, step float64, up bool, best *presets.Costs, bestLoss *float64,
	objective func(presets.Costs) (float64, error), logf func(string, ...any)) (bool, error) {
	moved := false
	for {
		cand := *best
		cr.Set(&cand, stepped(cr, cr.Get(&cand), step, up))
		if cr.Get(&cand) == cr.Get(best) {
			return moved, nil
		}
		l, err := objective(cand)
		if err != nil {
			return moved, err
		}
		if l >= *bestLoss-1e-9 {
			return moved, nil
		}
		*best, *bestLoss, moved = cand, l, true
		logf("step %.2f: %s = %s, loss %.3f", step, cr.Name, ShowCost(cr, best), l)
	}
}

// stepped is v moved one step up or down inside cr's range: a count by
// one, a figure multiplied or divided by step (a zero figure starts its
// search at a hundredth of its range).
func stepped(cr presets.CostRange, v, step float64, up bool) float64 {
	switch {
	case cr.Integer() && up:
		v++
	case cr.Integer():
		v--
	case v == 0 && up:
		v = cr.Min + (cr.Max-cr.Min)/100
	case up:
		v *= step
	default:
		v /= step
	}
	return math.Max(cr.Min, math.Min(cr.Max, v))
}

// ShowCost formats one figure of c.
func ShowCost(cr presets.CostRange, c *presets.Costs) string {
	v := cr.Get(c)
	switch {
	case cr.Duration():
		return fmt.Sprint(roundDur(v))
	case cr.Integer():
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

func costNames() []string {
	var out []string
	for _, cr := range presets.CostRanges {
		out = append(out, cr.Name)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
