package gate

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/harness/thresholds"
	"github.com/vllmperf/vllmperf/internal/harness/units"
)

func TestStartP(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		shift, sd, df  float64
		wantLo, wantHi float64
	}{
		{"no shift", 0, 0.03, 9, 0.5, 0.5},
		{"a better side", -0.05, 0.03, 9, 0.9, 1},
		{"1.645 sd, many degrees of freedom: the normal's 5%", 1.645 * 0.03, 0.03, 1e6, 0.0499, 0.0501},
		{"1.645 sd, 9 degrees of freedom: more than 5%", 1.645 * 0.03, 0.03, 9, 0.06, 0.08},
		{"no spread at all, worse", 0.01, 0, 9, 0, 0},
		{"no spread at all, unchanged", 0, 0, 9, 1, 1},
	} {
		if got := startP(tc.shift, tc.sd, tc.df); got < tc.wantLo || got > tc.wantHi {
			t.Errorf("%s: p = %.4g, want %.4g–%.4g", tc.name, got, tc.wantLo, tc.wantHi)
		}
	}
}

// fiveProfiles is the suite's shape: 5 profiles × 6 points, 10 runs a
// side, headline noise 2.5%, P99 noise 6-8%.
var fiveProfiles = suiteShape{
	profiles: []string{"basic", "chat", "long", "memory", "spec"},
	concs:    []int{1, 2, 4, 8, 16, 32},
	runs:     10,
	headCV:   0.025,
	p99CV:    [2]float64{0.06, 0.08},
	runCV:    0.01,
}

// slowProfiles slows every unit of the profiles by their factors (a
// server start of the new side, or a true change): times for -ns units,
// divided for tok/s.
func slowProfiles(f map[string]float64) changes {
	ch := changes{}
	for p, k := range f {
		for _, u := range shapeUnits {
			ch[p+" "+u] = k
			if u == units.TokPerSec {
				ch[p+" "+u] = 1 / k
			}
		}
	}
	return ch
}

// TestStartAllowance: the runs of a side share one server start per
// profile, so a shift of whole profiles by what starts do (here up to
// 3.5%, start_spread 2%: two starts differ by sd 2.8%) passes, where the
// rule that read the runs as independent draws failed it; a change of
// every profile by 5% fails through the suite-wide test (no profile alone
// can tell 5% from a start); +15% of one profile fails naming it alone, and
// so does one metric 25% slower on its every point, its rows named.
func TestStartAllowance(t *testing.T) {
	t.Parallel()
	starts := map[string]float64{"basic": 1.035, "chat": 0.98, "long": 1.025, "memory": 1.0, "spec": 1.03}
	every := map[string]float64{}
	for _, p := range fiveProfiles.profiles {
		every[p] = 1.05
	}
	tpot := changes{"chat " + units.TPOTP50: 1.25}
	for _, tc := range []struct {
		name     string
		ch       changes
		opts     Options
		want     Outcome
		named    []string // RegressedProfiles, in order
		rowsFrom string   // a profile whose rows must be named ("" none)
	}{
		{"starts shift whole profiles by up to 3.5%", slowProfiles(starts), Options{}, OutcomePass, nil, ""},
		{"the same, runs judged as independent draws (the earlier rule)", slowProfiles(starts), Options{OwnStarts: true}, OutcomeFail, nil, ""},
		{"every profile 5% slower", slowProfiles(every), Options{}, OutcomeFail, []string{SuiteProfile}, ""},
		{"one profile 15% slower", slowProfiles(map[string]float64{"long": 1.15}), Options{}, OutcomeFail, []string{"long"}, "long"},
		{"TPOT p50 25% slower on every point of chat", tpot, Options{}, OutcomeFail, []string{}, "chat"},
	} {
		base, next := fiveProfiles.pair(t, 77, tc.ch)
		rep, err := Compare(base, next, thresholds.Default(), tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Outcome(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, rep.Headline(), tc.want)
			for _, p := range rep.allTests() {
				t.Log(p.Describe())
			}
			continue
		}
		if tc.named != nil {
			if got := rep.RegressedProfiles(); !slices.Equal(got, tc.named) && len(got)+len(tc.named) > 0 {
				t.Errorf("%s: regressed profiles %q, want %q", tc.name, got, tc.named)
			}
		}
		if slices.Contains(tc.named, SuiteProfile) && !strings.Contains(rep.Headline(), "every profile slower together") {
			t.Errorf("%s: the verdict line does not name the suite-wide test: %s", tc.name, rep.Headline())
		}
		if tc.rowsFrom != "" && !slices.ContainsFunc(rep.Rows, func(r Row) bool { return r.Profile == tc.rowsFrom && r.Verdict == Regression }) {
			t.Errorf("%s: no row of %s named", tc.name, tc.rowsFrom)
		}
		for _, row := range rep.Rows {
			if row.Verdict == Regression && row.Profile != tc.rowsFrom {
				t.Errorf("%s: a row of %s is a REGRESSION: %s %s: %s", tc.name, row.Profile, row.Name, row.Unit, row.Reason)
			}
		}
		if tc.opts.OwnStarts && (len(rep.Suite) != 0 || rep.Profiles[0].PStart != 0) {
			t.Errorf("%s: start-aware tests with OwnStarts", tc.name)
		}
	}
}

// TestStartSuiteTest: the suite-wide test's shift is the mean of the
// profiles', its sd the profiles' combined over P; fewer than two
// profiles, or a profile without scored rows, make none.
func TestStartSuiteTest(t *testing.T) {
	t.Parallel()
	f := func(shift, sd, pWorse float64) *family {
		return &family{pWorse: pWorse, start: startTest{Shift: shift, SD: sd, Spread: 0.02, Rows: 12, DF: 9}}
	}
	for _, tc := range []struct {
		name      string
		fs        familySet
		ok        bool
		shift, sd float64
		pLo, pHi  float64
	}{
		{"one profile", familySet{f(0.05, 0.03, 0.01)}, false, 0, 0, 1, 1},
		{"four profiles 5% slower", familySet{f(0.05, 0.03, 0.01), f(0.05, 0.03, 0.01), f(0.05, 0.03, 0.01), f(0.05, 0.03, 0.01)}, true, 0.05, 0.015, 0.0004, 0.00045}, // the normal: the starts known, no runs part
		{"shifts that cancel", familySet{f(0.03, 0.03, 0.01), f(-0.03, 0.03, 0.9)}, true, 0, 0.03 / math.Sqrt2, 0.5, 0.5},
		{"a profile without scored rows", familySet{f(0.05, 0.03, 0.01), {pWorse: 0.01, start: startTest{P: 1, Spread: 0.02}}}, false, 0, 0, 1, 1},
	} {
		st, _, ok := startSuiteTest(tc.fs)
		if ok != tc.ok {
			t.Errorf("%s: ok %v, want %v", tc.name, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if math.Abs(st.Shift-tc.shift) > 1e-12 || math.Abs(st.SD-tc.sd) > 1e-12 || st.P < tc.pLo || st.P > tc.pHi {
			t.Errorf("%s: shift %.4g sd %.4g p %.4g, want %.4g, %.4g, p in %.4g–%.4g", tc.name, st.Shift, st.SD, st.P, tc.shift, tc.sd, tc.pLo, tc.pHi)
		}
	}
}

// TestStartMDE: with one start a side the minimum detectable effect
// never goes under the start floor, and more runs do not lower it; the
// too-noisy warning judges the runs' spread alone.
func TestStartMDE(t *testing.T) {
	t.Parallel()
	m := MDE{Spread: 0.02, RunSpread: 0.01, Level: 0.05 / 6 * 0.5, MinEffect: 0.05, minSamples: 6, startAware: true, StartSpread: 0.02}
	floor := m.StartFloor()
	if floor < 0.09 || floor > 0.11 {
		t.Errorf("start floor %.3g, want about 10%% (z 3.48 × √2 × 2%%)", floor)
	}
	for _, n := range []int{6, 10, 30, 100} {
		if e := m.At(n); e < floor || e < m.Within(n) {
			t.Errorf("%d runs: %.3g, under the floor %.3g or the runs' %.3g", n, e, floor, m.Within(n))
		}
	}
	if m.TooNoisyAt(10) {
		t.Errorf("too noisy at 10 runs: the runs alone see %.3g < 5%%", m.Within(10))
	}
	if w := m.RunsForWords(MDEReference); !strings.Contains(w, "not with one server start") {
		t.Errorf("runs for 5%%: %q", w)
	}
	own := m
	own.startAware = false
	if own.At(10) != own.Within(10) || own.StartFloor() != 0 {
		t.Errorf("without starts: %.3g, %.3g, floor %.3g", own.At(10), own.Within(10), own.StartFloor())
	}
}
