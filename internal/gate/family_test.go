package gate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/input"
)

// TestCauchyCombine checks the combination's known values.
func TestCauchyCombine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ps   []float64
		want float64
	}{
		// One test: its own p.
		{"one", []float64{0.03}, 0.03},
		// Equal p-values combine to the same p (the statistic is their tan).
		{"equal", []float64{0.2, 0.2, 0.2}, 0.2},
		// One tiny p among k: about k times it (Bonferroni-like).
		{"one small of four", []float64{1e-6, 0.5, 0.5, 0.5}, 4e-6},
		// p ≈ 1 is capped at 0.99, so that it cannot cancel strong evidence.
		{"capped near 1", []float64{1e-6, 1}, 2e-6},
		// Nothing to combine.
		{"none", []float64{math.NaN()}, 1},
	} {
		got := gatemath.CauchyCombine(tc.ps)
		if math.Abs(got-tc.want) > 0.02*tc.want {
			t.Errorf("%s: cauchyCombine(%v) = %g, want %g", tc.name, tc.ps, got, tc.want)
		}
	}
}

// TestCauchyCombineNull: under no change, with strongly correlated tests
// (one profile's metrics move together), the combined p still falls below
// 0.05 about 5% of the time.
func TestCauchyCombineNull(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 9))
	const trials = 20000
	below := 0
	for range trials {
		shared := rng.NormFloat64()
		ps := make([]float64, 12)
		for i := range ps {
			z := 0.8*shared + 0.6*rng.NormFloat64() // correlation 0.64
			ps[i] = 2 * (1 - normCDF(math.Abs(z)))
		}
		if gatemath.CauchyCombine(ps) < 0.05 {
			below++
		}
	}
	if rate := float64(below) / trials; rate > 0.06 {
		t.Errorf("combined p < 0.05 in %.1f%% of null trials, want ≤ 6%%", 100*rate)
	}
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// TestProfileRegression: a slowdown spread over a profile's points, each
// row under min_effect (5%), fails the profile as a whole when its median
// reaches profile_min_effect (3%); a smaller one passes. With one server
// start a side (start_spread 2%), +4% of a whole profile cannot be told
// from a start and passes, the profile's test saying so; +12% fails.
func TestProfileRegression(t *testing.T) {
	t.Parallel()
	own := Options{OwnStarts: true} // the runs judged as independent draws
	for _, tc := range []struct {
		name  string
		shift float64
		opts  Options
		want  Outcome
	}{
		// +4% on every point: no row reaches 5%, the profile does reach 3%.
		{"spread +4%", 0.04, own, OutcomeFail},
		// +2%: under profile_min_effect, however significant.
		{"spread +2%", 0.02, own, OutcomePass},
		// One start a side: +4% is within two starts' difference (sd 2.8%).
		{"spread +4%, one start a side", 0.04, Options{}, OutcomePass},
		// ... and +12% is not.
		{"spread +12%, one start a side", 0.12, Options{}, OutcomeFail},
	} {
		rng := rand.New(rand.NewPCG(5, 11))
		base, next := spreadBench(rng, 0), spreadBench(rng, tc.shift)
		b, err := input.Read(strings.NewReader(base), "base")
		if err != nil {
			t.Fatal(err)
		}
		n, err := input.Read(strings.NewReader(next), "new")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Compare(b, n, nil, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := rep.Outcome(); got != tc.want {
			t.Errorf("%s: outcome %s, want %s (%s)", tc.name, got, tc.want, rep.Headline())
		}
		if d := rep.Profiles[0].Describe(); !tc.opts.OwnStarts && tc.want == OutcomePass && !strings.Contains(d, "cannot be told from a server start") {
			t.Errorf("%s: the profile's test does not say a start could explain it: %s", tc.name, d)
		}
		if tc.shift > 0.05 {
			continue // its rows reach min_effect and are named
		}
		if rep.Count(Regression) != 0 {
			t.Errorf("%s: %d rows are REGRESSION; each moved less than min_effect\n%s", tc.name, rep.Count(Regression), rep.Rows[0].Reason)
		}
		if got := rep.RegressedProfiles(); (tc.want == OutcomeFail) != slices.Equal(got, []string{"basic"}) {
			t.Errorf("%s: regressed profiles %v", tc.name, got)
		}
	}
}

// spreadBench is 10 runs of 6 points of profile basic, TPOT about 10 ms
// (0.3% noise) times 1+shift.
func spreadBench(rng *rand.Rand, shift float64) string {
	var b strings.Builder
	b.WriteString("Unit tpot-p50-ns better=lower\n")
	for range 10 {
		for p := range 6 {
			fmt.Fprintf(&b, "BenchmarkPerf/profile=basic/scenario=s/conc=%d 1 %.0f tpot-p50-ns\n", 1<<p, 1e7*(1+shift)*math.Exp(0.003*rng.NormFloat64()))
		}
	}
	return b.String()
}

// TestProfileTestIsOneSided: the profile's regression test combines the
// rows' one-sided p for a change for the worse. A profile that improved
// is strongly changed (P tiny) but no evidence of a regression (PWorse
// near 1); one that got worse has PWorse about half its two-sided P.
func TestProfileTestIsOneSided(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		shift     float64
		wantWorse func(pWorse, p float64) bool
		want      string
	}{
		{"improved 4%", -0.04, func(pw, p float64) bool { return p < 1e-3 && pw > 0.9 }, "P < 0.001 and PWorse > 0.9"},
		{"worse 4%", 0.04, func(pw, p float64) bool { return pw < 1e-3 && pw < 0.6*p }, "PWorse < 0.001 and about P/2"},
	} {
		rng := rand.New(rand.NewPCG(5, 11))
		b, err := input.Read(strings.NewReader(spreadBench(rng, 0)), "base")
		if err != nil {
			t.Fatal(err)
		}
		n, err := input.Read(strings.NewReader(spreadBench(rng, tc.shift)), "new")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Compare(b, n, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Profiles) != 1 {
			t.Fatalf("%s: %d profile tests, want 1", tc.name, len(rep.Profiles))
		}
		if p := rep.Profiles[0]; !tc.wantWorse(p.PWorse, p.P) {
			t.Errorf("%s: PWorse %.3g, P %.3g: want %s", tc.name, p.PWorse, p.P, tc.want)
		}
	}
}
