package steadynoise

import (
	"fmt"
	"math"
	"slices"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// The protocol's fixed settings: the count the effects are for, the
// server starts a side, and the decision rule's bounds.
const (
	// Count is the runs a side the effects are computed for (the gate's
	// default count).
	Count = 10
	// Starts is the server starts a side (one go test process a side).
	Starts = 1
	// MaxMedian is the largest median ratio (steady / whole) that wins.
	MaxMedian = 0.90
	// MaxRatio is the largest ratio any cell may have and the steady
	// window still win (worse by at most 25%).
	MaxRatio = 1.25
)

// Cell is one profile's unit on both files: the whole run's and the
// steady window's minimum detectable effects.
type Cell struct {
	Profile, Unit string
	Whole, Steady gate.MDE
}

// Ratio is the steady window's effect of the runs alone at Count over the
// whole run's (MDE.Within): 1 where both are 0, +Inf where only the whole
// run's is.
func (c Cell) Ratio() float64 { return ratio(c.Steady.Within(Count), c.Whole.Within(Count)) }

func ratio(steady, whole float64) float64 {
	switch {
	case steady == whole: // both 0 (or both +Inf): no change
		return 1
	case whole == 0 || math.IsInf(steady, 1):
		return math.Inf(1)
	}
	return steady / whole
}

// Compare computes the cells of two files of the same runs: each
// profile's judged units (gate.MinimumEffects, the shipped thresholds,
// Count runs and Starts server start a side). Both must hold the same
// (profile, unit) pairs.
func Compare(whole, steady *input.Input) ([]Cell, error) {
	set := thresholds.Default()
	wm, err := gate.MinimumEffects(whole, set, Count, Starts)
	if err != nil {
		return nil, err
	}
	sm, err := gate.MinimumEffects(steady, set, Count, Starts)
	if err != nil {
		return nil, err
	}
	if len(wm) != len(sm) {
		return nil, fmt.Errorf("steadynoise: %s has %d (profile, unit) pairs, %s %d: record both files from one folder (Write)", whole.Name, len(wm), steady.Name, len(sm))
	}
	cells := make([]Cell, 0, len(wm))
	for _, w := range wm {
		i := slices.IndexFunc(sm, func(s gate.MDE) bool { return s.Profile == w.Profile && s.Unit == w.Unit })
		if i < 0 {
			return nil, fmt.Errorf("steadynoise: profile %s, %s is in %s, not in %s: record both files from one folder (Write)", w.Profile, w.Unit, whole.Name, steady.Name)
		}
		cells = append(cells, Cell{Profile: w.Profile, Unit: w.Unit, Whole: w, Steady: sm[i]})
	}
	return cells, nil
}

// Verdict is the decision rule's outcome at one size.
type Verdict struct {
	// Cells counts the cells; Smaller those whose ratio is below 1, Need
	// the fewest that win (⌈2·Cells/3⌉).
	Cells, Smaller, Need int
	// Median and Max are the ratios' median and largest.
	Median, Max float64
	// Wins says whether the steady window wins at this size: Smaller ≥
	// Need, Median ≤ MaxMedian and Max ≤ MaxRatio.
	Wins bool
}

// Decide applies the protocol's rule to one size's ratios. With no cell
// the steady window does not win.
func Decide(ratios []float64) Verdict {
	v := Verdict{Cells: len(ratios), Need: (2*len(ratios) + 2) / 3, Median: math.NaN(), Max: math.NaN()}
	if len(ratios) == 0 {
		return v
	}
	s := slices.Sorted(slices.Values(ratios))
	for _, r := range s {
		if r < 1 {
			v.Smaller++
		}
	}
	n := len(s)
	v.Median = s[n/2]
	if n%2 == 0 {
		v.Median = (s[n/2-1] + s[n/2]) / 2
	}
	v.Max = s[n-1]
	v.Wins = v.Smaller >= v.Need && v.Median <= MaxMedian && v.Max <= MaxRatio
	return v
}

// Adopt says whether the gate adopts the steady window: only when it wins
// at every size given, and at least one is.
func Adopt(vs []Verdict) bool {
	for _, v := range vs {
		if !v.Wins {
			return false
		}
	}
	return len(vs) > 0
}
