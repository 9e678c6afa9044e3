// Package sequential is the count that stops when the answer is clear: a
// few runs of every point, a look (the gate's Compare), and more runs
// only for the points whose rows are still open (INCONCLUSIVE, or NO
// REGRESSION with intervals too wide to rule the minimum effect out), up
// to a cap. The
// upgrade gate's pairs and the baseline gate's runs use it.
//
// Looking again after more runs gives a false alarm more chances, so
// each look spends a share of the gate's α, by a Lan-DeMets spending
// function of the information fraction t = runs / cap: A(t) is the α
// spent by then (O'Brien-Fleming's shape spends little early, Pocock's
// evenly), and a look after one at t₀ gates at A(t) − A(t₀)
// (thresholds.Set.WithAlphaScaled). By the union bound over the looks the
// false-alarm rate of the whole sequence is at most the gate's α: an
// equivalent of the exact group-sequential boundary, a little
// conservative, that needs no joint distribution of the gate's Holm- and
// Cauchy-combined tests. The gate's rules and α are its own; this package
// only hands each look its share. The rate is measured, as the fixed
// count's is (docs/gate.md, "The sequential count").
package sequential

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// Spending is a Lan-DeMets α-spending function: Spent(t, α) is the α a
// design has spent by information fraction t in (0, 1], rising to α at 1.
type Spending struct {
	Name  string
	Spent func(t, alpha float64) float64
}

// OBrienFleming is Lan and DeMets' O'Brien-Fleming-like spending function,
// 2 − 2Φ(z_{1−α/2} / √t): almost nothing early, nearly all of α at the cap.
var OBrienFleming = Spending{Name: "O'Brien-Fleming", Spent: func(t, alpha float64) float64 {
	z := math.Sqrt2 * math.Erfinv(1-alpha)
	return 2 - 2*normalCDF(z/math.Sqrt(t))
}}

// Pocock is Lan and DeMets' Pocock-like spending function,
// α ln(1 + (e − 1) t): about even shares, so an early look can decide.
var Pocock = Spending{Name: "Pocock", Spent: func(t, alpha float64) float64 {
	return alpha * math.Log(1+(math.E-1)*t)
}}

// Spendings are the spending functions by name.
var Spendings = map[string]Spending{"obrien-fleming": OBrienFleming, "pocock": Pocock}

func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// Design is a sequential count: the first look at Min runs a side, none
// past Cap, α spent by Spending.
type Design struct {
	Min, Cap int
	Spending Spending
	// StopOnPass stops at the gate's PASS even while rows are still open
	// (NO REGRESSION): the upgrade gate's rule, whose pairs cost two
	// server starts each. Without it a pass stops the count only once no
	// row is open.
	StopOnPass bool
}

// ErrDesign is wrapped by a Design that cannot run.
var ErrDesign = errors.New("sequential count")

// Check says what is wrong with d, if anything.
func (d Design) Check() error {
	switch {
	case d.Min < 1:
		return fmt.Errorf("%w: first look at %d runs: want at least 1", ErrDesign, d.Min)
	case d.Cap < d.Min:
		return fmt.Errorf("%w: cap %d is below the first look's %d runs", ErrDesign, d.Cap, d.Min)
	case d.Spending.Spent == nil:
		return fmt.Errorf("%w: no spending function (obrien-fleming or pocock)", ErrDesign)
	}
	return nil
}

// Share is the share of the gate's α (0 to 1) a look at now runs a side
// spends after a look at prev (0: none before). The look at the cap
// spends what is left.
func (d Design) Share(prev, now int) float64 {
	const alpha = 0.05 // the shape's α: shares are near the same for any usual α
	a := func(n int) float64 {
		if n <= 0 {
			return 0
		}
		return d.Spending.Spent(math.Min(float64(n)/float64(d.Cap), 1), alpha)
	}
	return math.Max(a(now)-a(prev), 0) / alpha
}

// Next is the runs of the look after an undecided one at cur: the gate's
// estimate of the runs that would decide (runsNeeded; -1: beyond what it
// can estimate, which goes to the cap), but at least half as many again
// as now (the estimate is rough at few runs), and at most the cap.
func (d Design) Next(cur, runsNeeded int) int {
	next := cur + max(2, cur/2)
	if runsNeeded < 0 {
		next = d.Cap
	}
	return min(d.Cap, max(next, runsNeeded))
}

// Sides are what a design drives: the two sides' runs and their gate.
type Sides interface {
	// Extend brings the named benchmarks (nil: every one) to runs runs a
	// side.
	Extend(runs int, only []string) error
	// Compare gates the runs so far at set.
	Compare(set *thresholds.Set) (*gate.Report, error)
}

// Look is one comparison of a sequential count.
type Look struct {
	// Runs is the most runs a side of any benchmark; Share the share of
	// α it spent.
	Runs  int
	Share float64
	// Decision is the gate's at this look; RunsNeeded its estimate for the
	// undecided rows; Undecided the benchmarks with a row still open
	// (undecided).
	Decision   gate.Decision
	Summary    string
	RunsNeeded int
	Undecided  []string
}

// Result is a sequential count's outcome: the last look's report, and
// every look.
type Result struct {
	Report *gate.Report
	Looks  []Look
	// Runs is the runs a side of the benchmarks that ran longest; Total
	// the runs a side summed over the benchmarks (what the count cost).
	Runs, Total int
}

// Decision is the last look's.
func (r *Result) Decision() gate.Decision { return r.Report.Decision() }

// Run drives s: Min runs of every benchmark, a look, and more runs of the
// undecided benchmarks only (the decided ones keep their runs), each look
// at its share of set's α. It stops at a FAIL (a regression found: more
// runs cannot take it back, and its α was spent), at an INVALID look (a
// run that was no sound measurement: more runs cannot clear it), when no
// row is left
// undecided (every row a regression, an improvement or NO CHANGE: a pass
// as sure as the cap's), or at the cap, where the gate's decision is the
// count's, whatever it is. benchmarks lists every benchmark (for Total).
func Run(d Design, set *thresholds.Set, s Sides, benchmarks []string) (*Result, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	if set == nil {
		set = thresholds.Empty()
	}
	runs := map[string]int{}
	res := &Result{}
	prev, cur := 0, d.Min
	var only []string // nil: every benchmark
	for {
		if err := s.Extend(cur, only); err != nil {
			return nil, err
		}
		targets := only
		if targets == nil {
			targets = benchmarks
		}
		for _, b := range targets {
			runs[b] = cur
		}
		share := d.Share(prev, cur)
		if cur >= d.Cap { // the last look spends what is left
			share = 1 - d.Share(0, prev)
		}
		rep, err := s.Compare(set.WithAlphaScaled(share))
		if err != nil {
			return nil, err
		}
		lk := Look{Runs: cur, Share: share, Decision: rep.Decision(), Summary: rep.Headline(), RunsNeeded: rep.RunsNeeded(), Undecided: undecided(rep)}
		res.Looks = append(res.Looks, lk)
		res.Report, res.Runs = rep, cur
		if lk.Decision == gate.Different || rep.Outcome() == gate.OutcomeInvalid || cur >= d.Cap || len(lk.Undecided) == 0 || d.StopOnPass && lk.Decision == gate.Same {
			break
		}
		prev, cur, only = cur, d.Next(cur, lk.RunsNeeded), lk.Undecided
	}
	for _, n := range runs {
		res.Total += n
	}
	return res, nil
}

// undecided lists the benchmarks with a row that more runs could still
// turn into a regression, sorted: INCONCLUSIVE, and NO REGRESSION (not
// significant, but the intervals do not rule out the minimum effect). The
// gate passes the latter; an interim look does not stop on it, or a few
// runs' wide intervals would pass what the cap's runs would catch.
func undecided(rep *gate.Report) []string {
	var out []string
	for _, row := range rep.Rows {
		if (row.Verdict == gate.Inconclusive || row.Verdict == gate.NoRegression) && !slices.Contains(out, row.Name) {
			out = append(out, row.Name)
		}
	}
	slices.Sort(out)
	return out
}
