package gate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/gatetest"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// issueShape is issue 33's: 2 profiles × 6 points, 10 runs a side, P99 CV
// 6-8%.
var issueShape = gatetest.SuiteShape{
	Profiles: []string{"basic", "chat"},
	Concs:    []int{1, 2, 4, 8, 16, 32},
	Runs:     10,
	HeadCV:   0.025,
	P99CV:    [2]float64{0.06, 0.08},
	RunCV:    0.01,
}

func compareShape(t testing.TB, s gatetest.SuiteShape, seed uint64, ch gatetest.Changes) *Report {
	t.Helper()
	base, next := s.Pair(t, seed, ch)
	rep, err := Compare(base, next, thresholds.Default(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestTailRegressionFails: only one P99 moving by 20-25% on every point
// of one profile fails the gate, naming the profile and the metric and no
// other; the same data without the change, or with the P99 20% better,
// passes (issue 33's "Done when", on generated suite-shaped data).
func TestTailRegressionFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		unit   string
		factor float64
	}{
		{units.TTFTP99, 1.20},
		{units.TPOTP99, 1.20},
		{units.ITLP99, 1.20},
		{units.TTFTP99, 1.25},
		{units.TPOTP99, 1.25},
		{units.ITLP99, 1.25},
	} {
		t.Run(fmt.Sprintf("%s×%.2f", tc.unit, tc.factor), func(t *testing.T) {
			t.Parallel()
			for seed := uint64(1); seed <= 5; seed++ {
				rep := compareShape(t, issueShape, seed, gatetest.Changes{"chat " + tc.unit: tc.factor})
				if got := rep.Outcome(); got != OutcomeFail || got.ExitCode() != 1 {
					t.Fatalf("seed %d: %s, want FAIL (exit 1):\n%s", seed, rep.Headline(), describeProfiles(rep))
				}
				want := "chat " + tc.unit
				if got := rep.RegressedTests(); !slices.Equal(got, []string{want}) {
					t.Errorf("seed %d: regressed %q, want only %q:\n%s", seed, got, want, describeProfiles(rep))
				}
				if h := rep.Headline(); !strings.Contains(h, "profiles: "+want) {
					t.Errorf("seed %d: the verdict line does not name %q: %s", seed, want, h)
				}
			}
		})
	}
}

// TestTailNoiseAndImprovementPass: an A/A pair and a P99 improvement on
// every point of a profile pass.
func TestTailNoiseAndImprovementPass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ch   gatetest.Changes
	}{
		{"A/A", nil},
		{"TTFT p99 20% better", gatetest.Changes{"chat " + units.TTFTP99: 0.8}},
		{"every P99 20% better", gatetest.Changes{"basic " + units.TTFTP99: 0.8, "basic " + units.TPOTP99: 0.8, "basic " + units.ITLP99: 0.8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for seed := uint64(1); seed <= 5; seed++ {
				rep := compareShape(t, issueShape, seed, tc.ch)
				if got := rep.Outcome(); got != OutcomePass {
					t.Errorf("seed %d: %s, want PASS:\n%s", seed, rep.Headline(), describeProfiles(rep))
				}
			}
		})
	}
}

func describeProfiles(rep *Report) string {
	var b strings.Builder
	for _, p := range slices.Concat(rep.Profiles, rep.Tails) {
		b.WriteString("  " + p.Describe() + "\n")
	}
	return b.String()
}

// TestTailTestByRuns: the run test sees a change on every point from the
// runs' scores, one-sided each way, and leaves out a point whose runs do
// not line up.
func TestTailTestByRuns(t *testing.T) {
	up := func(base []float64, f float64) []float64 {
		out := slices.Clone(base)
		for i := range out {
			out[i] *= f
		}
		return out
	}
	b := []float64{10, 11, 9, 10.5, 9.5, 10.2}
	slow := []*test{{baseRuns: b, nextRuns: up(b, 1.3)}, {baseRuns: b, nextRuns: up(b, 1.3)}}
	worse, better, points := tailTest(units.Lower, slow)
	if points != 2 || worse > 0.01 || better < 0.9 {
		t.Errorf("every run slower: p worse %.3g, better %.3g, %d points; want small, large, 2", worse, better, points)
	}
	if w, bt, _ := tailTest(units.Higher, slow); w != better || bt != worse {
		t.Errorf("higher is better: the two sides swap: got %.3g, %.3g", w, bt)
	}
	misaligned := append(slow, &test{baseRuns: b[:5], nextRuns: b})
	if _, _, points := tailTest(units.Lower, misaligned); points != 2 {
		t.Errorf("a point with 5 runs among points of 6: used %d points, want 2", points)
	}
	if w, bt, points := tailTest(units.Lower, nil); w != 1 || bt != 1 || points != 0 {
		t.Errorf("no points: %g, %g, %d; want 1, 1, 0", w, bt, points)
	}
}

// TestMidRanks checks ties share their mean rank.
func TestMidRanks(t *testing.T) {
	got := gatemath.MidRanks([]float64{3, 1, 3, 2})
	if want := []float64{3.5, 1, 3.5, 2}; !slices.Equal(got, want) {
		t.Errorf("midRanks = %v, want %v", got, want)
	}
}

// TestOneAlpha: a row that is significant on its own cannot fail the gate
// when its profile's one-sided test is not (one α, not two), and every
// component's p is at least its profile's.
func TestOneAlpha(t *testing.T) {
	g := thresholds.DefaultGate
	rep := &Report{
		Rows: []Row{
			{Profile: "basic", Unit: units.TPOTP50, Verdict: Regression, Settings: g, Reason: "r"},
			{Profile: "chat", Unit: units.TTFTP99, Tail: true, Verdict: Regression, Settings: g, Reason: "r"},
		},
		Profiles: []ProfileTest{{Profile: "basic", PWorseHolm: 0.2, Alpha: 0.05}},
		Tails:    []ProfileTest{{Profile: "chat", Metric: units.TTFTP99, PWorseHolm: 0.01, Alpha: 0.05}},
	}
	oneAlphaRows(rep)
	if v := rep.Rows[0].Verdict; v != NoRegression {
		t.Errorf("a row of a profile whose test is p=0.2: %s, want NO REGRESSION", v)
	}
	if v := rep.Rows[1].Verdict; v != Regression {
		t.Errorf("a tail row whose tail test is p=0.01: %s, want REGRESSION", v)
	}

	fs := familySet{{profile: "basic", pWorse: 0.001, pIUT: 0.001}, {profile: "chat", pWorse: 0.6, pIUT: 0.6}}
	tails := []*tailFamily{{profile: "chat", unit: units.TTFTP99, pWorse: 0.004}, {profile: "chat", unit: units.ITLP99, pWorse: 0.5}}
	head, _ := oneAlpha(fs, tails, false)
	for i, f := range fs {
		if head[i] < f.pGate || head[i] < f.pWorse {
			t.Errorf("%s: headline p %.3g, profile %.3g, raw %.3g: want the headline's at least the others", f.profile, head[i], f.pGate, f.pWorse)
		}
	}
	for _, tf := range tails {
		if tf.pWorseHolm < tf.pGate || tf.pWorseHolm < tf.pWorse || tf.pGate != fs[1].pGate {
			t.Errorf("%s: %.3g, profile %.3g (chat's %.3g)", tf.unit, tf.pWorseHolm, tf.pGate, fs[1].pGate)
		}
	}
	if tails[0].pWorseHolm >= 0.05 {
		t.Errorf("chat's TTFT p99 at p=0.004 among 2 tests of chat and 2 profiles: %.3g, want < 0.05", tails[0].pWorseHolm)
	}
}

// TestInvalidProfileIsNoPlainFail: a tail regression in a profile with an
// INVALID run is INVALID (exit 2), not FAIL.
// The INVALID run may be of a point with results, or of one without any
// (every run of it failed: it is not among the rows).
func TestInvalidProfileIsNoPlainFail(t *testing.T) {
	t.Parallel()
	for _, bench := range []string{"Perf/profile=chat/scenario=concurrency-sweep/conc=8", "Perf/profile=chat/scenario=startup"} {
		base, next := issueShape.Pair(t, 1, gatetest.Changes{"chat " + units.TTFTP99: 1.25})
		next.RunChecks = []input.RunCheck{{Benchmark: bench, Status: input.StatusInvalid, Name: "gpu/throttle", Detail: "thermal"}}
		rep, err := Compare(base, next, thresholds.Default(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Outcome(); got != OutcomeInvalid {
			t.Errorf("%s INVALID: outcome %s (%s), want INVALID", bench, got, rep.Headline())
		}
		i := slices.IndexFunc(rep.Tails, func(p ProfileTest) bool { return p.Name() == "chat "+units.TTFTP99 })
		if i < 0 || rep.Tails[i].Regression || !strings.Contains(rep.Tails[i].Describe(), "INVALID") {
			t.Errorf("%s INVALID: chat's TTFT p99 test should say INVALID: %+v", bench, rep.Tails)
		}
	}
}

// tailRates gates n generated pairs from seed first on, and counts how
// many fail, and how many name only the profile and metric changed.
func tailRates(t testing.TB, s gatetest.SuiteShape, first uint64, n int, ch gatetest.Changes, want string) (fails, named int) {
	for seed := first; seed < first+uint64(n); seed++ {
		rep := compareShape(t, s, seed, ch)
		if rep.Outcome() != OutcomeFail {
			continue
		}
		fails++
		if slices.Equal(rep.RegressedTests(), []string{want}) {
			named++
		}
	}
	return fails, named
}
