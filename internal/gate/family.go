package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
)

// A family is one profile's headline tests: the gate combines their
// evidence into one test of the profile before it looks at single rows
// (docs/gate.md, "How the evidence is combined").
type family struct {
	profile string
	tests   []*test
	// p is the profile's combined p-value (Cauchy combination of its
	// rows' p); pHolm the same after Holm's correction over the profiles.
	p, pHolm float64
	// pWorse combines the rows' one-sided p for a change for the worse.
	pWorse float64
	// pGate is the profile's test in the one α procedure (oneAlpha).
	pGate float64
	// start is the headline rows' run scores tested against the starts
	// (start.go: the shift the report shows, and the suite-wide test's
	// part); its zero value where the runs are judged as independent
	// draws. pStart combines the rows' own start-aware p (Cauchy), and
	// pIUT the rows' larger of pWorse and pStart: the profile's headline
	// test in the one α procedure (pWorse without starts).
	start        startTest
	pStart, pIUT float64
	// points is the profile's point contrasts (points.go), nil where the
	// runs are judged as independent or no two points line up.
	points *pointFamily
}

// ProfileTest is one profile's combined test, as the report shows it.
type ProfileTest struct {
	// Profile is the profile ("" for benchmarks without one).
	Profile string
	// Metric is "" for the test of the profile's headline rows, else the
	// tail metric (units.Tails) whose rows it tests by runs.
	Metric string
	// Point, for a points test (points.go), is the point its contrast
	// finds worst, Points then the points contrasted, and Own that
	// point's own change for the worse, not contrasted (Effect is its
	// change against its profile); "" otherwise.
	Point string
	Own   float64
	// Tests is the number of rows combined; Points, for a tail test,
	// the points whose runs line up (tailTest).
	Tests, Points int
	// P is the Cauchy combination of the rows' p-values (two-sided: any
	// change); PHolm the same after Holm's correction over
	// Report.Profiles. They gate the profile's rows (the hierarchy).
	P, PHolm float64
	// PWorse is the Cauchy combination of the rows' one-sided p-values
	// for a change in each row's bad direction (a tail test's: its run
	// test's); PWorseHolm the same in the one α procedure: the larger of
	// Holm over the profile's tests and PGate. It decides the
	// regression: the gate asks whether NEW is worse, and a row that
	// improved is no evidence of that.
	PWorse, PWorseHolm float64
	// PGate is the profile's test in the one α procedure: the Cauchy
	// combination of its headline and tail tests' PWorse, after Holm
	// over the profiles (docs/gate.md, "One α").
	PGate float64
	// Effect is the median relative change of the rows in their bad
	// direction (0.04: 4% worse); MinEffect the profile's
	// profile_min_effect; Alpha its α.
	Effect, MinEffect, Alpha float64
	// Regression: PWorseHolm < Alpha and Effect ≥ MinEffect: the profile
	// fails as a whole, whether or not a row of it is a REGRESSION.
	Regression bool
	// Explained says why a regression of the profile is INVALID instead:
	// within what a slower runner explains (runner.go); "" otherwise.
	Explained string
	// Invalid says why a test that would have regressed is not called
	// a regression: a run of the profile was INVALID ("" otherwise).
	Invalid string
	// PStart is the start-aware test's one-sided p (start.go; 0 where
	// the runs are judged as independent): a profile's headline test
	// and a tail test fail only when the larger of PWorse and PStart
	// passes the one α procedure (an intersection-union test). Shift is
	// the log change of the run scores it measured, StartSD its standard
	// deviation with nothing changed (two starts and the runs),
	// StartSpread the start_spread setting, StartRows the rows scored.
	PStart, Shift, StartSD, StartSpread float64
	StartRows                           int
	// BaseStarts and NextStarts are the server starts the start-aware
	// test allowed for on each side (ServerStartKey).
	BaseStarts, NextStarts int
	// LeftOut, PLeaveOut and LeaveOutShift are the suite-wide test's
	// weakest leave-one-out test (start.go's leaveOut): the profile it
	// left out, its p (below Alpha for a regression: no one profile
	// carries the mean) and the other profiles' mean shift.
	LeftOut                  string
	PLeaveOut, LeaveOutShift float64
}

type familySet []*family

// size is the number of tests in the family of profile (0 if none).
func (fs familySet) size(profile string) int {
	for _, f := range fs {
		if f.profile == profile {
			return len(f.tests)
		}
	}
	return 0
}

// families groups the gated tests by profile, combines each profile's
// p-values, corrects the profiles' with Holm, then each row's p with
// Holm within its profile; a row's PHolm is the larger of its profile's
// corrected p and its own: a row can be significant only when its profile
// is (the hierarchical procedure: profiles first, then the rows of the
// profiles found changed, each step at α). The profiles go to
// rep.Profiles.
func families(rep *Report, gated []*test, tails []*tailFamily, starts bool) familySet {
	var fs familySet
	for _, t := range gated {
		p := rep.Rows[t.row].Profile
		i := slices.IndexFunc(fs, func(f *family) bool { return f.profile == p })
		if i < 0 {
			fs, i = append(fs, &family{profile: p}), len(fs)
		}
		fs[i].tests = append(fs[i].tests, t)
	}
	combined := make([]float64, len(fs))
	for i, f := range fs {
		ps, pw := make([]float64, len(f.tests)), make([]float64, len(f.tests))
		for j, t := range f.tests {
			ps[j], pw[j] = rep.Rows[t.row].P, t.pWorse
		}
		f.p, f.pWorse = gatemath.CauchyCombine(ps), gatemath.CauchyCombine(pw)
		f.pIUT = f.pWorse
		if sp := startSpread(rep, f.tests); starts && sp > 0 {
			f.start = startShift(rep, f.tests, sp)
			ss, iut := make([]float64, len(f.tests)), make([]float64, len(f.tests))
			for j, t := range f.tests {
				t.pStart = rowStart(rep, t, sp)
				ss[j], iut[j] = t.pStart, max(t.pWorse, t.pStart)
			}
			f.pStart, f.pIUT = gatemath.CauchyCombine(ss), gatemath.CauchyCombine(iut)
			f.points = pointContrasts(rep, f.tests)
		}
		combined[i] = f.p
		for j, adj := range gatemath.Holm(ps) {
			rep.Rows[f.tests[j].row].PHolm = adj
		}
	}
	worseHolm, suite := oneAlpha(fs, tails, starts)
	for i, adj := range gatemath.Holm(combined) {
		f := fs[i]
		f.pHolm = adj
		for _, t := range f.tests {
			row := &rep.Rows[t.row]
			row.PHolm = max(row.PHolm, adj)
		}
		rep.Profiles = append(rep.Profiles, profileTest(rep, f, adj, worseHolm[i]))
		if f.points != nil {
			rep.pointFamilies = append(rep.pointFamilies, f.points)
			rep.Points = append(rep.Points, pointsProfileTest(rep, f.points))
		}
	}
	if suite != nil {
		rep.Suite = append(rep.Suite, suiteProfileTest(rep.Profiles, suite))
	}
	return fs
}

// profileTest is the family's test as the report shows it, with its
// verdict: the one-sided combined p after Holm against α, and the median
// of its rows' changes for the worse against the profile's
// profile_min_effect.
func profileTest(rep *Report, f *family, pHolm, pWorseHolm float64) ProfileTest {
	bad := make([]float64, 0, len(f.tests))
	for _, t := range f.tests {
		row := &rep.Rows[t.row]
		bad = append(bad, gatemath.BadChange(row.Direction, row.Baseline.Median, row.New.Median))
	}
	slices.Sort(bad)
	effect := bad[len(bad)/2]
	if len(bad)%2 == 0 {
		effect = (bad[len(bad)/2-1] + bad[len(bad)/2]) / 2
	}
	g := rep.Rows[f.tests[0].row].Settings
	pt := withStart(ProfileTest{
		Profile: f.profile, Tests: len(f.tests), P: f.p, PHolm: pHolm,
		PWorse: f.pWorse, PWorseHolm: pWorseHolm, PGate: f.pGate,
		Effect: effect, MinEffect: g.ProfileMinEffect, Alpha: g.Alpha,
		Regression: g.ProfileMinEffect > 0 && pWorseHolm < g.Alpha && effect >= g.ProfileMinEffect,
	}, f.start)
	if f.start != (startTest{}) {
		pt.PStart = f.pStart
	}
	return pt
}

// Describe says the profile's test in words: "speculative: 16 headline
// rows, median change +5.40% for the worse (profile_min_effect 3%),
// combined p for the worse=0.0001 (0.0002 in the one α procedure, α 0.05;
// the profile's test 0.0002), for any change p=0.0002: REGRESSION of the
// profile"; a tail test says its metric and points.
func (p ProfileTest) Describe() string {
	verdict := "no regression of the profile"
	switch {
	case p.Regression:
		verdict = "REGRESSION of the profile"
	case p.Invalid != "":
		verdict = "INVALID, not called a regression: " + p.Invalid
	}
	if p.Explained != "" {
		verdict = "INVALID, not a regression: " + p.Explained
	}
	name := p.Profile
	if name == "" {
		name = "(no profile)"
	}
	if p.Metric != "" {
		return p.describeTail(name, verdict)
	}
	if p.Point != "" {
		return p.describePoint(name, strings.Replace(verdict, "of the profile", "of the point", 1))
	}
	if p.Profile == SuiteProfile {
		return p.describeSuite(verdict)
	}
	return fmt.Sprintf("%s: %d headline rows, median change %+.2f%% for the worse (profile_min_effect %g%%), combined p for the worse=%.2g (%.2g in the one α procedure, α %g; the profile's test %.2g), for any change p=%.2g%s: %s",
		name, p.Tests, 100*p.Effect, 100*p.MinEffect, p.PWorse, p.PWorseHolm, p.Alpha, p.PGate, p.P, p.startWords(), verdict)
}
