package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/aclements/go-moremath/stats"
	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// A tailFamily is one tail metric of one profile: its rows with enough
// runs on both sides, tested together by runs.
type tailFamily struct {
	profile, unit string
	tests         []*test
	// pWorse and pBetter are the one-sided p of the run test (tailTest);
	// points the points it used (aligned runs), of len(tests).
	pWorse, pBetter float64
	points          int
	// pWorseHolm is the test after the one α procedure (oneAlpha), pGate
	// its profile's test there.
	pWorseHolm, pGate float64
	// start is the family's start-aware test (start.go), zero where the
	// runs are judged as independent.
	start startTest
}

// tailFamilies groups the tail rows (not headline, a direction, at
// least min_samples runs a side) by profile and metric, and runs each
// family's test.
func tailFamilies(rep *Report, tests []test, starts bool) []*tailFamily {
	var out []*tailFamily
	for i := range tests {
		t := &tests[i]
		row := &rep.Rows[t.row]
		if t.gated || row.Headline || !units.IsTail(row.Unit) || (row.Direction != units.Lower && row.Direction != units.Higher) {
			continue
		}
		if min := row.Settings.MinSamples; row.Baseline.N < min || row.New.N < min {
			row.Tail, row.Verdict = true, Inconclusive
			setTooFewRuns(row, 0, 0) // judge adds what Holm's correction needs
			continue
		}
		j := slices.IndexFunc(out, func(f *tailFamily) bool { return f.profile == row.Profile && f.unit == row.Unit })
		if j < 0 {
			out, j = append(out, &tailFamily{profile: row.Profile, unit: row.Unit}), len(out)
		}
		out[j].tests = append(out[j].tests, t)
	}
	for _, f := range out {
		d := rep.Rows[f.tests[0].row].Direction
		f.pWorse, f.pBetter, f.points = tailTest(d, f.tests)
		if sp := startSpread(rep, f.tests); starts && sp > 0 {
			f.start = startShift(rep, f.tests, sp)
			for _, t := range f.tests {
				t.pStart = rowStart(rep, t, sp)
			}
		}
	}
	return out
}

// tailTest is the test of one tail metric over a profile's points, by
// runs: the i-th run of every point is one run of the suite (go test
// -count repeats the whole benchmark), so each run gets a score, the
// mean over the points of its value's rank among that point's runs of
// both sides (mid-ranks, scaled to 0–1), and the Mann-Whitney U test
// compares the two sides' run scores, one-sided each way. A run that is
// slow on every point (a slow server start) is one run, not one per
// point: the test stays valid when the points of a run are correlated,
// and a change on every point moves every score. Points whose run counts
// differ from the profile's most common ones (a run that failed a check)
// are left out; points is how many were used.
func tailTest(d units.Direction, tests []*test) (pWorse, pBetter float64, points int) {
	nb, nn := modeLen(tests, func(t *test) []float64 { return t.baseRuns }), modeLen(tests, func(t *test) []float64 { return t.nextRuns })
	bs, ns := make([]float64, nb), make([]float64, nn)
	for _, t := range tests {
		if len(t.baseRuns) != nb || len(t.nextRuns) != nn {
			continue
		}
		points++
		ranks := gatemath.MidRanks(append(slices.Clone(t.baseRuns), t.nextRuns...))
		for i := range nb {
			bs[i] += ranks[i]
		}
		for i := range nn {
			ns[i] += ranks[nb+i]
		}
	}
	if points == 0 || nb < 2 || nn < 2 {
		return 1, 1, 0
	}
	rise := oneSided(bs, ns, stats.LocationLess)    // the baseline's scores below the new ones
	fall := oneSided(bs, ns, stats.LocationGreater) // above
	if d == units.Higher {
		return fall, rise, points
	}
	return rise, fall, points
}

func oneSided(a, b []float64, alt stats.LocationHypothesis) float64 {
	p, _, err := gatemath.MannWhitney(a, b, alt)
	if err != nil {
		return 1
	}
	return p
}

// modeLen is the most common length of the runs of the tests (the
// larger one on a tie).
func modeLen(tests []*test, runs func(*test) []float64) int {
	count := map[int]int{}
	best := 0
	for _, t := range tests {
		n := len(runs(t))
		count[n]++
		if count[n] > count[best] || (count[n] == count[best] && n > best) {
			best = n
		}
	}
	return best
}

// oneAlpha is the one procedure through which the gate fails
// (docs/gate.md, "One α"). Each profile is one hypothesis, "NEW is not
// worse", tested by the weighted Bonferroni combination of its
// components' one-sided p: the headline rows' combined test
// (family.pWorse, weight headlineWeight) and one test per tail metric
// (tailTest, the rest shared). A component's own p is p/weight; the
// profile's the smallest of those; Holm's correction over the profiles
// gives pGate; a component's p is the larger of its own and its
// profile's. A component's own p is the larger of its test's and its
// start-aware test's (start.go: an intersection-union test). With starts,
// the suite-wide test (startSuiteTest) is one more hypothesis of weight
// one, beside the profiles, in the same Holm correction; it is returned
// (nil without it). So is the points test (points.go): every profile's
// point contrasts, Bonferroni over all of them. Every way to fail (a profile's headline test, a tail test,
// a row) needs its component below α, so an unchanged suite fails with
// probability at most α, whatever the dependence between the tests
// (Bonferroni's minimum, unlike a combination of all the p, is not
// weakened by a component that improved). It returns the headline
// component's p of each family, in the order of fs, and sets the tail
// families' pWorseHolm and pGate.
func oneAlpha(fs familySet, tails []*tailFamily, starts bool) ([]float64, *suiteHyp) {
	type member struct {
		p      float64
		family *family
		tail   *tailFamily
		suite  *suiteHyp
		points *suitePointsTest
	}
	var profiles []string
	byProfile := map[string][]member{}
	add := func(profile string, m member) {
		if _, ok := byProfile[profile]; !ok {
			profiles = append(profiles, profile)
		}
		byProfile[profile] = append(byProfile[profile], m)
	}
	for _, f := range fs {
		add(f.profile, member{p: f.pIUT, family: f})
	}
	for _, tf := range tails {
		add(tf.profile, member{p: max(tf.pWorse, tf.start.P), tail: tf})
	}
	var suite *suiteHyp
	if starts {
		if st, within, loo, ok := startSuiteTest(fs); ok {
			suite = &suiteHyp{start: st, pWithin: within, leaveOut: loo}
			profiles = append(profiles, SuiteProfile)
			byProfile[SuiteProfile] = []member{{p: max(st.P, within), suite: suite}}
		}
	}
	if pts := suitePoints(fs, len(profiles)+1); pts != nil {
		profiles = append(profiles, pointsHypothesis)
		byProfile[pointsHypothesis] = []member{{p: pts.p, points: pts}}
	}
	raw := make([]float64, len(profiles))
	for i, p := range profiles {
		members := byProfile[p]
		hasHeadline := slices.ContainsFunc(members, func(m member) bool { return m.family != nil })
		nTails := len(members)
		if hasHeadline {
			nTails--
		}
		raw[i] = 1
		for j := range members {
			m := &members[j]
			if m.suite == nil && m.points == nil {
				m.p = min(1, m.p/gatemath.ComponentWeight(m.family != nil, hasHeadline, nTails))
			}
			raw[i] = min(raw[i], m.p)
		}
	}
	headline := map[*family]float64{}
	for i, gate := range gatemath.Holm(raw) {
		for _, m := range byProfile[profiles[i]] {
			adj := max(m.p, gate)
			switch {
			case m.family != nil:
				m.family.pGate, headline[m.family] = gate, adj
			case m.tail != nil:
				m.tail.pGate, m.tail.pWorseHolm = gate, adj
			case m.points != nil:
				m.points.setGate(gate)
			default:
				m.suite.pGate = gate
			}
		}
	}
	out := make([]float64, len(fs))
	for i, f := range fs {
		out[i] = headline[f]
	}
	return out, suite
}

// tailProfileTests judges the tail families: each is a ProfileTest with
// its Metric in rep.Tails, and its rows are
// decided as rows of the family: PHolm the larger of Holm over the
// family's rows and the family's two-sided p after Holm over every tail
// family. absolute says whether an absolute limit judges a row's unit.
func tailProfileTests(rep *Report, tails []*tailFamily, absolute func(*Row) bool) {
	two := make([]float64, len(tails))
	for i, tf := range tails {
		two[i] = min(1, 2*min(tf.pWorse, tf.pBetter))
	}
	twoHolm := gatemath.Holm(two)
	for i, tf := range tails {
		bad := make([]float64, 0, len(tf.tests))
		ps := make([]float64, len(tf.tests))
		for j, t := range tf.tests {
			row := &rep.Rows[t.row]
			row.Tail = true
			bad = append(bad, gatemath.BadChange(row.Direction, row.Baseline.Median, row.New.Median))
			ps[j] = row.P
		}
		for j, adj := range gatemath.Holm(ps) {
			row := &rep.Rows[tf.tests[j].row]
			row.PHolm = max(adj, twoHolm[i])
			decide(row, len(tf.tests), tf.tests[j].theta, absolute(row))
		}
		g := rep.Rows[tf.tests[0].row].Settings
		effect := gatemath.Median(bad)
		rep.Tails = append(rep.Tails, withStart(ProfileTest{
			Profile: tf.profile, Metric: tf.unit, Tests: len(tf.tests), Points: tf.points,
			P: two[i], PHolm: twoHolm[i], PWorse: tf.pWorse, PWorseHolm: tf.pWorseHolm, PGate: tf.pGate,
			Effect: effect, MinEffect: g.MinEffect, Alpha: g.Alpha,
			Regression: tf.pWorseHolm < g.Alpha && effect >= g.MinEffect,
		}, tf.start))
	}
}

// oneAlphaRows keeps a row from failing the gate outside the one α
// procedure: a REGRESSION row whose component (its profile's headline
// test, or its tail metric's) is not below α after oneAlpha becomes NO
// REGRESSION. The rows' own correction (two-sided, hierarchical) names
// the points; it is not a second way to fail.
func oneAlphaRows(rep *Report) {
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if row.Verdict != Regression {
			continue
		}
		tests, metric := rep.Profiles, ""
		if row.Tail {
			tests, metric = rep.Tails, row.Unit
		}
		j := slices.IndexFunc(tests, func(p ProfileTest) bool { return p.Profile == row.Profile && p.Metric == metric })
		if j < 0 || tests[j].PWorseHolm < row.Settings.Alpha {
			continue
		}
		if _, ok := rep.pointRegressed(row); ok && !row.Tail {
			continue // its point's contrast (points.go) fails it
		}
		row.Verdict = NoRegression
		row.Reason = fmt.Sprintf("%s; not a regression: its profile's one-sided test for the worse (the gate's one α) has p=%.3g ≥ α %g",
			row.Reason, tests[j].PWorseHolm, row.Settings.Alpha)
		if p := tests[j]; p.PStart > p.PWorse {
			row.Reason += fmt.Sprintf(" (against server starts: its profile's shift %+.2f%% has sd %.2f%% with %s, start_spread %g%%)",
				100*math.Expm1(p.Shift), 100*p.StartSD, startsPhrase(p.BaseStarts, p.NextStarts, "start"), 100*p.StartSpread)
		}
	}
}

// invalidProfiles keeps a profile with an INVALID run from being a plain
// FAIL: its tests and rows that regressed say INVALID instead (the
// outcome is INVALID, exit 2, unless something else fails outright).
// runChecks does the same for the rows of the benchmark itself.
func invalidProfiles(rep *Report, failed []input.RunCheck) {
	why := map[string]string{}
	for _, rc := range failed {
		if rc.Status != input.StatusInvalid {
			continue
		}
		name, err := benchname.Parse(rc.Benchmark)
		if err != nil { // not the suite's name: the rows of the benchmark say
			i := slices.IndexFunc(rep.Rows, func(r Row) bool { return r.Name == rc.Benchmark })
			if i < 0 {
				continue
			}
			name.Profile = rep.Rows[i].Profile
		}
		if _, seen := why[name.Profile]; !seen {
			why[name.Profile] = rc.Benchmark + ": " + rc.Name + ": " + rc.Detail
		}
	}
	for _, p := range rep.Suite {
		if len(why) > 0 {
			why[p.Profile] = "in " + strings.Join(sortedKeys(why), ", ")
		}
	}
	for _, tests := range [][]ProfileTest{rep.Profiles, rep.Tails, rep.Suite, rep.Points} {
		for i := range tests {
			p := &tests[i]
			if w, ok := why[p.Profile]; ok && p.Regression {
				p.Regression = false
				p.Invalid = "a run of the profile was INVALID (" + w + ")"
			}
		}
	}
	for i := range rep.Rows {
		row := &rep.Rows[i]
		if w, ok := why[row.Profile]; ok && row.Verdict == Regression {
			row.Verdict = InvalidVerdict
			row.Reason = "not called a regression: a run of its profile was INVALID (" + w + "); " + row.Reason
		}
	}
}

// Name is the test's name in the verdict line: the profile, and its tail
// metric when it has one ("basic ttft-p99-ns").
func (p ProfileTest) Name() string {
	switch {
	case p.Point != "":
		return p.Profile + " " + p.Point
	case p.Metric == "":
		return p.Profile
	}
	return p.Profile + " " + p.Metric
}

// describeTail is Describe for a tail test.
func (p ProfileTest) describeTail(name, verdict string) string {
	return fmt.Sprintf("%s %s (tail): %d points tested by runs (%d lined up), median change %+.2f%% for the worse (min_effect %g%%), p for the worse=%.2g (%.2g in the one α procedure, α %g; the profile's test %.2g), for any change p=%.2g%s: %s",
		name, p.Metric, p.Tests, p.Points, 100*p.Effect, 100*p.MinEffect, p.PWorse, p.PWorseHolm, p.Alpha, p.PGate, p.P, p.startWords(), verdict)
}

// RegressedTests names the tests that regressed, as the verdict line
// does: the profile for its headline test, "profile metric" for a tail
// test.
func (r *Report) RegressedTests() []string {
	var out []string
	for _, p := range r.AllTests() {
		if p.Regression {
			out = append(out, p.Name())
		}
	}
	return out
}

// AllTests are the profiles' headline tests, the tail tests, the
// suite-wide test, then the points tests.
func (r *Report) AllTests() []ProfileTest {
	return slices.Concat(r.Profiles, r.Tails, r.Suite, r.Points)
}
