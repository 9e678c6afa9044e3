package gate

import (
	"fmt"
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// A point's contrast (docs/gate.md, "One point against its profile"): a
// change confined to one point (prefix caching, structured output, a long
// prefill) is diluted in its profile's combined test, one point among
// twenty, and its row's own test is judged against a whole server start.
// A start moves every point of a profile together, so the point's change
// against the rest of its profile's change cancels the start: run i's
// contrast is, averaged over the point's headline units, its log value
// in the bad direction less the mean of the same unit's log values over
// the profile's other points in run i. The sides' contrasts are compared
// with the one-sided Mann-Whitney U test (exact, no assumption on their
// distribution); a weighted Bonferroni over every profile's points
// (gatemath.PointWeights: half of the level evenly, half to the points a
// change of twice min_effect would leave near the line, the weights from
// the contrasts' spread with the sides' labels ignored, so the U tests
// stay exact) gives the points
// test, one more hypothesis beside the profiles and the suite-wide test
// in the one α procedure's Holm correction (oneAlpha), so that the
// profiles' own tests lose no more than one more step of it. What it assumes: a start shifts a
// unit by the same factor on every point of the profile; a start effect
// peculiar to one point would be read as that point's change. The startup
// scenario's point measures the server start itself (its first requests,
// cold TTFT), so it is left out: its change is its profile's test's.

// A pointFamily is one profile's point contrasts.
type pointFamily struct {
	profile string
	points  []pointContrast
	// alpha is the gate's α; pGate the points test's p after Holm (set
	// by oneAlpha).
	alpha, pGate float64
}

// pointsHypothesis names the points test in oneAlpha's Holm correction.
const pointsHypothesis = "\x00points"

// suitePointsTest is the points test over every profile's contrasts: p
// is the smallest point's p times the points of the suite (Bonferroni).
type suitePointsTest struct {
	families []*pointFamily
	p        float64
}

// suitePoints is the points test of the families' contrasts, one of
// hyps hypotheses of the one α procedure; nil when no family has
// contrasts.
func suitePoints(fs familySet, hyps int) *suitePointsTest {
	st := &suitePointsTest{p: 1}
	var all []*pointContrast
	alpha := 0.0
	for _, f := range fs {
		if f.points != nil {
			st.families = append(st.families, f.points)
			alpha = f.points.alpha
			for i := range f.points.points {
				all = append(all, &f.points.points[i])
			}
		}
	}
	if len(st.families) == 0 {
		return nil
	}
	xi := make([]float64, len(all))
	for j, c := range all {
		xi[j] = c.noncentrality()
	}
	for j, w := range gatemath.PointWeights(xi, alpha/float64(max(hyps, 1))) {
		all[j].weight = w
		st.p = min(st.p, all[j].p/w)
	}
	return st
}

// noncentrality is the point's aimed change (twice its min_effect) over
// the standard error of its contrasts' mean difference, their spread
// taken over both sides' runs together (the sides' labels ignored, so
// that the weights it gives tell nothing of the test's outcome).
func (c pointContrast) noncentrality() float64 {
	return math.Log1p(2*c.minEffect) / (c.sd * math.Sqrt(1/float64(c.nb)+1/float64(c.nn)))
}

// setGate records the points test's p after Holm in every family.
func (st *suitePointsTest) setGate(gate float64) {
	for _, pf := range st.families {
		pf.pGate = gate
	}
}

// pointContrast is one point's contrast test.
type pointContrast struct {
	name string
	// rows are the point's headline rows contrasted (row the first's
	// index); shift the change of the mean contrast (log, bad
	// direction), NEW's less the baseline's; p the one-sided U test's for
	// NEW worse; own the point's own change (the same mean of its rows'
	// log values, not contrasted); minEffect the smallest min_effect of
	// the rows.
	rows, row                int
	shift, own, p, minEffect float64
	// sd is the contrasts' spread over both sides' runs together, nb and
	// nn the sides' runs; weight the point's share of the points test's
	// α (set by suitePoints).
	sd, weight float64
	nb, nn     int
}

// reaches says whether the point's change reaches its minimum effect,
// both against its profile and on its own: a point its profile's
// improvement left behind is no regression.
func (c pointContrast) reaches() bool {
	return math.Expm1(c.shift) >= c.minEffect && math.Expm1(c.own) >= c.minEffect
}

// pointContrasts computes the contrasts of a profile's headline tests:
// nil when fewer than two points have a unit in common, or the runs do not
// line up (the i-th run of every point is one run of the suite).
func pointContrasts(rep *Report, tests []*test) *pointFamily {
	nb, nn := modeLen(tests, func(t *test) []float64 { return t.baseRuns }), modeLen(tests, func(t *test) []float64 { return t.nextRuns })
	if nb < 2 || nn < 2 {
		return nil
	}
	type unitSum struct {
		b, n []float64
		k    int
	}
	sums := map[string]*unitSum{}
	var ok []*test
	for _, t := range tests {
		if len(t.baseRuns) != nb || len(t.nextRuns) != nn || !gatemath.AllPositive(t.baseRuns) || !gatemath.AllPositive(t.nextRuns) ||
			rep.Rows[t.row].Scenario == benchname.StartupScenario {
			continue
		}
		ok = append(ok, t)
		u := rep.Rows[t.row].Unit
		s := sums[u]
		if s == nil {
			s = &unitSum{b: make([]float64, nb), n: make([]float64, nn)}
			sums[u] = s
		}
		s.k++
		gatemath.AddLogs(s.b, t.baseRuns, badSign(rep, t))
		gatemath.AddLogs(s.n, t.nextRuns, badSign(rep, t))
	}
	var names []string
	byName := map[string][]*test{}
	for _, t := range ok {
		name := rep.Rows[t.row].Name
		if sums[rep.Rows[t.row].Unit].k < 2 {
			continue // no other point measures the unit
		}
		if _, seen := byName[name]; !seen {
			names = append(names, name)
		}
		byName[name] = append(byName[name], t)
	}
	if len(names) < 2 {
		return nil
	}
	pf := &pointFamily{profile: rep.Rows[tests[0].row].Profile, alpha: rep.Rows[tests[0].row].Settings.Alpha}
	for _, name := range names {
		pt := byName[name]
		cb, cn := make([]float64, nb), make([]float64, nn)
		minEffect, total, own := math.Inf(1), 0.0, 0.0
		for _, t := range pt {
			minEffect = min(minEffect, rep.Rows[t.row].Settings.MinEffect)
			s, sign := sums[rep.Rows[t.row].Unit], badSign(rep, t)
			ub, un := gatemath.Contrast(t.baseRuns, s.b, s.k, sign), gatemath.Contrast(t.nextRuns, s.n, s.k, sign)
			w := 1 / max(stats.Variance(slices.Concat(ub, un)), gatemath.MinVariance)
			gatemath.AddScaled(cb, ub, w)
			gatemath.AddScaled(cn, un, w)
			total += w
			own += w * sign * (gatemath.MeanLog(t.nextRuns) - gatemath.MeanLog(t.baseRuns))
		}
		gatemath.AddScaled(cb, cb, 1/total-1)
		gatemath.AddScaled(cn, cn, 1/total-1)
		p, _, err := gatemath.MannWhitney(cb, cn, stats.LocationLess) // the baseline's contrasts below NEW's: worse
		if err != nil {
			p = 1
		}
		pf.points = append(pf.points, pointContrast{name: name, rows: len(pt), row: pt[0].row, shift: stats.Mean(cn) - stats.Mean(cb), own: own / total, p: p, minEffect: minEffect,
			sd: math.Sqrt(max(stats.Variance(slices.Concat(cb, cn)), gatemath.MinVariance)), nb: nb, nn: nn})
	}
	return pf
}

// badSign is +1 for a row whose bad direction is a rise, −1 for a fall.
func badSign(rep *Report, t *test) float64 {
	if rep.Rows[t.row].Direction == units.Higher {
		return -1
	}
	return 1
}

// adjusted is point c's p in the one α procedure: its own p over its
// weight (weighted Bonferroni over the suite's points), and no smaller
// than the points test's (pGate).
func (pf *pointFamily) adjusted(c pointContrast) float64 {
	return max(min(1, c.p/c.weight), pf.pGate)
}

// pointsProfileTest is the family's test as the report shows it: the
// point the contrast finds worst (the smallest p among those whose change
// reaches their min_effect; else the smallest p), a regression when its
// p in the one α procedure is below α and its change reaches min_effect.
func pointsProfileTest(rep *Report, pf *pointFamily) ProfileTest {
	best := 0
	for i, c := range pf.points {
		b := pf.points[best]
		if (c.reaches() && !b.reaches()) || (c.reaches() == b.reaches() && c.p/c.weight < b.p/b.weight) {
			best = i
		}
	}
	c := pf.points[best]
	g := rep.Rows[c.row].Settings
	adj := pf.adjusted(c)
	return ProfileTest{
		Profile: pf.profile, Point: c.name, Tests: c.rows, Points: len(pf.points),
		P: math.NaN(), PHolm: math.NaN(), PWorse: c.p, PWorseHolm: adj, PGate: pf.pGate,
		Effect: math.Expm1(c.shift), Own: math.Expm1(c.own), MinEffect: c.minEffect, Alpha: g.Alpha,
		Regression: adj < g.Alpha && c.reaches(),
	}
}

// pointRegressed says whether the row's point is a regression by its
// contrast (its adjusted p below α and its change at least min_effect).
func (rep *Report) pointRegressed(row *Row) (float64, bool) {
	for _, pf := range rep.pointFamilies {
		if pf.profile != row.Profile {
			continue
		}
		i := slices.IndexFunc(pf.points, func(c pointContrast) bool { return c.name == row.Name })
		if i < 0 {
			return 1, false
		}
		c := pf.points[i]
		adj := pf.adjusted(c)
		return adj, adj < row.Settings.Alpha && c.reaches()
	}
	return 1, false
}

// describePoint is Describe for a profile's points test.
func (p ProfileTest) describePoint(name, verdict string) string {
	return fmt.Sprintf("%s, one point against the rest of its profile (a server start cancels): of %d points the worst is %s, %d headline rows, its change against the profile's %+.2f%% for the worse (min_effect %g%%), p for the worse=%.2g (%.2g over its weight among the suite's points in the one α procedure, α %g; the points test %.2g)%s: %s",
		name, p.Points, p.Point, p.Tests, 100*p.Effect, 100*p.MinEffect, p.PWorse, p.PWorseHolm, p.Alpha, p.PGate, p.ownWords(), verdict)
}

// ownWords says the point's own change beside its contrast.
func (p ProfileTest) ownWords() string {
	return fmt.Sprintf("; its own change %+.2f%% (a regression needs both at least min_effect)", 100*p.Own)
}
