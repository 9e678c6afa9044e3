package gate

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclements/go-moremath/stats"
	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate/gatemath"
	"github.com/vllmperf/vllmperf/internal/gate/gatetest"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestMDEAt checks the formula, that more runs see less, and that a count
// at which the exact test cannot reach the level sees nothing.
func TestMDEAt(t *testing.T) {
	m := MDE{Spread: 0.05, Level: 0.05 / 4, minSamples: 6}
	z := stats.StdNormal.InvCDF(1-0.0125) + stats.StdNormal.InvCDF(0.8)
	want := math.Expm1(z * 0.05 * math.Sqrt(2.0/10) * math.Sqrt(math.Pi/3))
	if got := m.At(10); math.Abs(got-want) > 1e-12 {
		t.Errorf("At(10) = %g, want %g", got, want)
	}
	if !(m.At(20) < m.At(10)) {
		t.Errorf("At(20) = %g not below At(10) = %g", m.At(20), m.At(10))
	}
	if got := m.At(3); !math.IsInf(got, 1) { // 1/C(6,3) = 0.05 ≥ 0.0125
		t.Errorf("At(3) = %g, want +Inf", got)
	}
	n := m.RunsFor(0.05)
	if n < 6 || m.At(n) > 0.05 || (n > 6 && m.At(n-1) <= 0.05) {
		t.Errorf("RunsFor(5%%) = %d: At(n) = %g, At(n-1) = %g", n, m.At(n), m.At(n-1))
	}
	if got := (MDE{Spread: 0.5, Level: 0.01}).RunsFor(0.05); got != -1 {
		t.Errorf("a 50%% spread sees 5%% from %d runs, want -1 (more than %d)", got, gatemath.MaxRunsEstimate)
	}
}

// TestMinimumEffects: the spread of generated data is about what was put
// in (the run's shared factor plus the points' own noise averaged), and
// the report, text and JSON, carries every judged metric of each profile.
func TestMinimumEffects(t *testing.T) {
	t.Parallel()
	rep := compareShape(t, issueShape, 1, nil)
	if got, want := len(rep.MinimumEffects), len(issueShape.Profiles)*len(gatetest.ShapeUnits); got != want {
		t.Fatalf("%d minimum effects, want %d (every judged unit of each profile)", got, want)
	}
	for _, m := range rep.MinimumEffects {
		cv := issueShape.HeadCV
		if units.IsTail(m.Unit) {
			cv = (issueShape.P99CV[0] + issueShape.P99CV[1]) / 2
		}
		expect := math.Hypot(cv, issueShape.RunCV) // a row's
		if units.IsTail(m.Unit) {                  // the run's mean over the points
			expect = math.Hypot(cv/math.Sqrt(float64(len(issueShape.Concs))), issueShape.RunCV)
		}
		if m.Spread < expect/2 || m.Spread > 2*expect || m.Points != len(issueShape.Concs) || m.Runs != 10 {
			t.Errorf("%s %s: spread %.4f from %d points at %d runs; want about %.4f from %d at 10", m.Profile, m.Unit, m.Spread, m.Points, m.Runs, expect, len(issueShape.Concs))
		}
		if m.TooNoisy != (m.Effect > m.MinEffect) {
			t.Errorf("%s %s: %.1f%% against %g%%: too noisy %v", m.Profile, m.Unit, 100*m.Effect, 100*m.MinEffect, m.TooNoisy)
		}
	}
}

// TestTooNoisyBaseline: a baseline too noisy to see a metric's
// min_effect says so by name, in the warnings and in gate.json.
func TestTooNoisyBaseline(t *testing.T) {
	t.Parallel()
	noisy := issueShape
	noisy.P99CV = [2]float64{0.30, 0.35}
	rep := compareShape(t, noisy, 1, nil)
	found := false
	for _, w := range rep.Warnings {
		if strings.Contains(w, "baseline too noisy to see the minimum effect: profile chat, "+units.TTFTP99+": at 10 runs a side") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning names chat's %s:\n%s", units.TTFTP99, strings.Join(rep.Warnings, "\n"))
	}
	for _, m := range rep.MinimumEffects {
		if m.TooNoisy != (m.Effect > m.MinEffect) || (units.IsTail(m.Unit) && !m.TooNoisy) {
			t.Errorf("%s %s: %.1f%% against %g%%: too noisy %v", m.Profile, m.Unit, 100*m.Effect, 100*m.MinEffect, m.TooNoisy)
		}
	}
	// The metrics that only the start floor hides share one warning that
	// names the floor.
	floors := 0
	for _, w := range rep.Warnings {
		if strings.Contains(w, "the server starts' floor is above the minimum effect: with one server start a side (start_spread 2%)") && strings.Contains(w, "chat "+units.TPOTP50) {
			floors++
		}
	}
	if floors != 1 {
		t.Errorf("%d warnings name the start floor for chat's %s, want one:\n%s", floors, units.TPOTP50, strings.Join(rep.Warnings, "\n"))
	}
	// One run a side (make bench): the rows are short of runs already; no
	// warning on top.
	one := issueShape
	one.Runs = 1
	base, _ := noisy.Pair(t, 1, nil)
	_, next := one.Pair(t, 1, nil)
	rep, err := Compare(base, next, thresholds.Default(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tooNoisy(rep.MinimumEffects)) != 0 {
		t.Errorf("one new run: warnings %q", tooNoisy(rep.MinimumEffects))
	}
}

// TestFiguresTailMDE computes docs/gate.md's table of what tail change the
// gate can see on the committed simulator baseline at the default count.
func TestFiguresTailMDE(t *testing.T) {
	t.Parallel()
	sim, err := input.ReadFile(filepath.Join(docfigures.ModuleRoot(t), "baselines", "sim.txt"))
	if err != nil {
		t.Fatal(err)
	}
	const count = 10
	ms, err := MinimumEffects(sim, thresholds.Default(), count, 1)
	if err != nil {
		t.Fatal(err)
	}
	docfigures.Sync(t, "docs/gate.md", "gate-tails-mde", "\n"+mdeTable(ms, count, append([]string{units.E2ELP99, units.TPOTP50}, units.Tails...))+"\n")
}

// mdeTable is a markdown table of the minimum detectable effects of
// these units per profile: the effect at count, and the runs for 5%.
func mdeTable(ms []MDE, count int, cols []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| profile (`baselines/sim.txt`) |")
	for _, u := range cols {
		fmt.Fprintf(&b, " %s |", u)
	}
	b.WriteString("\n|---|" + strings.Repeat("--:|", len(cols)) + "\n")
	var profiles []string
	for _, m := range ms {
		if len(profiles) == 0 || profiles[len(profiles)-1] != m.Profile {
			profiles = append(profiles, m.Profile)
		}
	}
	for _, p := range profiles {
		fmt.Fprintf(&b, "| %s |", p)
		for _, u := range cols {
			cell := "—"
			for _, m := range ms {
				if m.Profile == p && m.Unit == u {
					cell = fmt.Sprintf("%s (runs alone: %s; 5%%: %s)", FormatMDE(m.Effect), FormatMDE(m.Within(count)), m.RunsWords())
				}
			}
			fmt.Fprintf(&b, " %s |", cell)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nEach cell: the change on every point of the profile the gate finds with %g%% power at %d runs a side (the default count), with one server start a side and the shipped start_spread (%g%%); \"runs alone\": what the runs' spread alone would allow (the runs of a start as independent draws); and the runs a side that would find 5%%, where the starts allow it.", 100*MDEPower, count, 100*thresholds.DefaultGate.StartSpread)
	return b.String()
}
