package gate

import (
	"fmt"
	"math"

	"github.com/aclements/go-moremath/stats"
	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// SuiteProfile is the name the suite-wide test goes by in the report and
// the verdict line: it tests every profile at once (startSuiteTest).
const SuiteProfile = "every profile"

// A startTest is a test's start-aware part (docs/gate.md, "One server
// start a side"): go test -count runs every repetition of a profile's
// points on one server start, so the runs of a side are not independent
// draws of the profile's level: a start shifts them all. The shift the
// test measures between the sides is judged against the starts'
// difference (variance σ_s²·(1/k_b + 1/k_n), σ_s the start_spread setting,
// k the starts of each side: 2σ_s² with one start a side) plus its own
// sampling variance, not against the runs' spread alone.
type startTest struct {
	// Shift is the mean over the sides' runs of the run's score, NEW's
	// minus the baseline's: a run's score is the mean, over the test's
	// rows, of the log value in the bad direction (a rise of a
	// lower-is-better metric, a fall of a higher-is-better one).
	Shift float64
	// SD is Shift's standard deviation when nothing changed: √(σ_s²·
	// startShare + the sampling variance within the starts, the run
	// scores' variance over the runs, each side's, added).
	SD float64
	// BaseStarts and NextStarts are the server starts of each side (the
	// fewest of the rows scored).
	BaseStarts, NextStarts int
	// Spread is σ_s; Rows the rows scored (runs lined up, values
	// positive); DF the degrees of freedom of SD² (Welch-Satterthwaite:
	// the starts' part is known, the runs' part has each side's runs
	// less one), and satt the sum over the estimated parts of
	// (variance)²/df that gives it.
	Spread float64
	Rows   int
	DF     float64
	satt   float64
	// P is the one-sided p for NEW worse: 1 − T_DF(Shift/SD), 1 when
	// no row could be scored.
	P float64
}

// startShift scores the tests' runs (lined up as tailTest does: the i-th
// run of every row is one run of the suite) and tests the shift between
// the sides against spread.
func startShift(rep *Report, tests []*test, spread float64) startTest {
	st := startTest{Spread: spread, P: 1, BaseStarts: math.MaxInt, NextStarts: math.MaxInt}
	nb, nn := modeLen(tests, func(t *test) []float64 { return t.baseRuns }), modeLen(tests, func(t *test) []float64 { return t.nextRuns })
	if nb < 2 || nn < 2 {
		return st
	}
	bs, ns := make([]float64, nb), make([]float64, nn)
	for _, t := range tests {
		if len(t.baseRuns) != nb || len(t.nextRuns) != nn || !gatemath.AllPositive(t.baseRuns) || !gatemath.AllPositive(t.nextRuns) {
			continue
		}
		sign := 1.0
		if rep.Rows[t.row].Direction == units.Higher {
			sign = -1
		}
		st.Rows++
		st.BaseStarts, st.NextStarts = min(st.BaseStarts, t.baseStarts), min(st.NextStarts, t.nextStarts)
		for i, v := range t.baseRuns {
			bs[i] += sign * math.Log(v)
		}
		for i, v := range t.nextRuns {
			ns[i] += sign * math.Log(v)
		}
	}
	if st.Rows == 0 {
		st.BaseStarts, st.NextStarts = 1, 1
		return st
	}
	for i := range bs {
		bs[i] /= float64(st.Rows)
	}
	for i := range ns {
		ns[i] /= float64(st.Rows)
	}
	st.Shift = stats.Mean(ns) - stats.Mean(bs)
	st.SD, st.DF, st.satt = gatemath.StartSD(spread, gatemath.StartShare(st.BaseStarts, st.NextStarts), bs, ns)
	st.P = gatemath.StartP(st.Shift, st.SD, st.DF)
	return st
}

// rowStart is one row's start-aware p: the change of its mean log value
// in the bad direction against the sides' starts' difference and the row's own
// sampling variance (each side's variance of the log values over its
// runs); 1 where the values are not all positive (no relative change).
func rowStart(rep *Report, t *test, spread float64) float64 {
	nb, nn := len(t.baseRuns), len(t.nextRuns)
	if nb < 2 || nn < 2 || !gatemath.AllPositive(t.baseRuns) || !gatemath.AllPositive(t.nextRuns) {
		return 1
	}
	logs := func(vs []float64) []float64 {
		out := make([]float64, len(vs))
		for i, v := range vs {
			out[i] = math.Log(v)
		}
		return out
	}
	b, n := logs(t.baseRuns), logs(t.nextRuns)
	shift := stats.Mean(n) - stats.Mean(b)
	if rep.Rows[t.row].Direction == units.Higher {
		shift = -shift
	}
	sd, df, _ := gatemath.StartSD(spread, gatemath.StartShare(t.baseStarts, t.nextStarts), b, n)
	return gatemath.StartP(shift, sd, df)
}

// startRows keeps a row from being named a REGRESSION that a server
// start explains: a REGRESSION row whose start-aware p (rowStart) is not
// below α becomes NO REGRESSION, the reason saying so. The gate's failure
// is controlled by the row's test in the one α procedure, which is start-
// aware already; this guards the naming of the points within it.
func startRows(rep *Report, tests []*test) {
	for _, t := range tests {
		row := &rep.Rows[t.row]
		if row.Verdict != Regression || t.pStart == 0 || t.pStart < row.Settings.Alpha {
			continue
		}
		row.Verdict = NoRegression
		row.Reason = fmt.Sprintf("%s; not a regression: a server start could explain it (start_spread %g%%, %s: its start-aware p=%.3g ≥ α %g)",
			row.Reason, 100*row.Settings.StartSpread, startsPhrase(t.baseStarts, t.nextStarts, "start"), t.pStart, row.Settings.Alpha)
	}
}

// startSuiteTest is the suite-wide test (docs/gate.md, "One server start
// a side"): the profiles' starts are independent, so the mean of their
// shifts has variance Σ(2σ_s² + sampling)/P²: a change of every profile by
// the same amount is seen at about 1/√P of the change one profile needs.
// Its p is the larger of the start-aware p and the Cauchy combination of
// the profiles' own one-sided p (within the starts): an intersection-union
// test, valid when either is. It needs at least two profiles. The mean
// can be carried by one profile that moved a lot, so it also returns the
// weakest of its leave-one-out tests (startLeaveOut), which must be below
// α too for the suite-wide test to name every profile.
func startSuiteTest(fs familySet) (st startTest, pWithin float64, loo leaveOut, ok bool) {
	if len(fs) < 2 {
		return startTest{P: 1}, 1, leaveOut{}, false
	}
	for _, f := range fs {
		if f.start.Rows == 0 {
			return startTest{P: 1}, 1, leaveOut{}, false
		}
	}
	st, pWithin = meanShift(fs, -1)
	loo.P = math.Inf(-1)
	for j := range fs {
		sub, within := meanShift(fs, j)
		if p := max(sub.P, within); p > loo.P {
			loo = leaveOut{start: sub, pWithin: within, profile: fs[j].profile, P: p}
		}
	}
	return st, pWithin, loo, true
}

// meanShift tests the mean of the profiles' shifts, all but fs[skip]
// (skip −1: all): its start-aware test, and the Cauchy combination of
// their own one-sided p within the starts.
func meanShift(fs familySet, skip int) (st startTest, pWithin float64) {
	var shift, variance float64
	ps := make([]float64, 0, len(fs))
	for k, f := range fs {
		if k == skip {
			continue
		}
		s := f.start
		if st.BaseStarts == 0 || s.BaseStarts < st.BaseStarts {
			st.BaseStarts = s.BaseStarts
		}
		if st.NextStarts == 0 || s.NextStarts < st.NextStarts {
			st.NextStarts = s.NextStarts
		}
		shift += s.Shift
		variance += s.SD * s.SD
		st.Rows += s.Rows
		st.Spread = max(st.Spread, s.Spread)
		st.satt += s.satt
		ps = append(ps, f.pWorse)
	}
	n := float64(len(ps))
	st.Shift, st.SD, st.DF = shift/n, math.Sqrt(variance)/n, gatemath.SatDF(variance, st.satt)
	st.P = gatemath.StartP(st.Shift, st.SD, st.DF)
	return st, gatemath.CauchyCombine(ps)
}

// A leaveOut is the weakest of the suite-wide test's leave-one-out tests:
// for each profile, the same test of the other profiles (their mean shift
// against their starts and sampling, and their combined p within the
// starts, the larger of the two); the one with the largest p, P, and the
// profile it left out. "Every profile slower together" is named only
// when P is below α too: then no one profile carries the mean (left out,
// the rest still show it), and one profile's change, however large, names
// every profile with probability at most α (leave it out: the rest are
// unchanged). An intersection-union test with the mean's, so the one α
// procedure's level holds.
type leaveOut struct {
	start   startTest
	pWithin float64
	profile string
	P       float64
}

// startWords says a profile test's start-aware part in words, for
// Describe: the shift, the starts' allowance and its p.
func (p ProfileTest) startWords() string {
	if p.StartSD == 0 && p.PStart == 0 {
		return ""
	}
	if p.StartRows == 0 {
		return "; no row could be scored against the server starts (runs not lined up, or values not positive): no regression can be called"
	}
	s := fmt.Sprintf("; against server starts (start_spread %g%%): shift %+.2f%%, sd %.2f%% with %s, p=%.2g",
		100*p.StartSpread, 100*math.Expm1(p.Shift), 100*p.StartSD, startsPhrase(p.BaseStarts, p.NextStarts, "start"), p.PStart)
	if !p.Regression && p.PWorse < p.Alpha && p.PStart > p.PWorse {
		s += fmt.Sprintf(" (a shift under about %.1f%% cannot be told from a server start: run more starts, or measure start_spread)", 100*math.Expm1(3*p.StartSD))
	}
	return s
}

// suiteHyp is the suite-wide hypothesis in the one α procedure: its
// start-aware test, the profiles' combined p within the starts, and its
// p after Holm's correction with the profiles.
type suiteHyp struct {
	start          startTest
	pWithin, pGate float64
	leaveOut       leaveOut
}

// startSpread is the start_spread of the tests' rows (the largest, where
// overrides differ).
func startSpread(rep *Report, tests []*test) float64 {
	s := 0.0
	for _, t := range tests {
		s = max(s, rep.Rows[t.row].Settings.StartSpread)
	}
	return s
}

// withStart adds a start-aware test to p (nothing for the zero test: the
// runs judged as independent).
func withStart(p ProfileTest, st startTest) ProfileTest {
	if st == (startTest{}) {
		return p
	}
	p.PStart, p.Shift, p.StartSD, p.StartSpread, p.StartRows = st.P, st.Shift, st.SD, st.Spread, st.Rows
	p.BaseStarts, p.NextStarts = st.BaseStarts, st.NextStarts
	return p
}

// suiteProfileTest is the suite-wide test as the report shows it: its
// effect the mean of the profiles' headline effects, which must reach
// the largest of their profile_min_effect, its p in the one α procedure
// below α, and its weakest leave-one-out test's p below α (no one profile
// carries it).
func suiteProfileTest(profiles []ProfileTest, h *suiteHyp) ProfileTest {
	p := withStart(ProfileTest{Profile: SuiteProfile, P: math.NaN(), PHolm: math.NaN(),
		PWorse: h.pWithin, PGate: h.pGate, PWorseHolm: max(h.pGate, h.pWithin, h.start.P),
		LeftOut: h.leaveOut.profile, PLeaveOut: h.leaveOut.P, LeaveOutShift: h.leaveOut.start.Shift}, h.start)
	for _, f := range profiles {
		p.Tests += f.Tests
		p.Effect += f.Effect / float64(len(profiles))
		p.MinEffect, p.Alpha = max(p.MinEffect, f.MinEffect), f.Alpha
	}
	p.Regression = p.MinEffect > 0 && p.PWorseHolm < p.Alpha && p.Effect >= p.MinEffect && p.PLeaveOut < p.Alpha
	return p
}

// describeSuite is Describe for the suite-wide test.
func (p ProfileTest) describeSuite(verdict string) string {
	if verdict == "REGRESSION of the profile" {
		verdict = "REGRESSION of every profile together"
	}
	carried := ""
	if p.PWorseHolm < p.Alpha && p.Effect >= p.MinEffect && p.PLeaveOut >= p.Alpha {
		carried = fmt.Sprintf(" (one profile carries the mean: without %s the rest do not show it)", p.LeftOut)
	}
	return fmt.Sprintf("%s (suite-wide, headline metrics): %d headline rows, mean of the profiles' median changes %+.2f%% for the worse (profile_min_effect %g%%), the profiles' combined p for the worse=%.2g; against server starts (start_spread %g%%, the profiles' starts independent): mean shift %+.2f%%, sd %.2f%%, p=%.2g (%.2g in the one α procedure, α %g); without any one profile (the weakest: without %s, mean shift %+.2f%%), p=%.2g, α %g: %s%s",
		p.Profile, p.Tests, 100*p.Effect, 100*p.MinEffect, p.PWorse, 100*p.StartSpread, 100*math.Expm1(p.Shift), 100*p.StartSD, p.PStart, p.PWorseHolm, p.Alpha,
		p.LeftOut, 100*math.Expm1(p.LeaveOutShift), p.PLeaveOut, p.Alpha, verdict, carried)
}
