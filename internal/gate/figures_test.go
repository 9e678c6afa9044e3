package gate

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// TestFiguresGate computes docs/gate.md's counts from the committed
// simulator baseline through the gate (make figures rewrites them): what
// the gate judges over the whole suite, the runs a side that can decide,
// and the baseline against itself.
func TestFiguresGate(t *testing.T) {
	t.Parallel()
	sim, err := input.ReadFile(filepath.Join(docfigures.ModuleRoot(t), "baselines", "sim.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(sim, sim, thresholds.Default(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	docfigures.Sync(t, "docs/gate.md", "gate-suite", "\n"+suiteFigures(rep)+"\n")
}

// suiteFigures describes the whole suite's gate: a paragraph of docs/gate.md.
func suiteFigures(rep *Report) string {
	benches, directed := map[string]bool{}, 0
	for _, row := range rep.Rows {
		benches[row.Name] = true
		if row.Headline || row.Tail || row.Reported() {
			directed++
		}
	}
	largest := 0
	for _, p := range rep.Profiles {
		largest = max(largest, p.Tests)
	}
	profiles, tails := len(rep.Profiles), len(rep.Tails)
	m := largest * profiles
	g := thresholds.DefaultGate
	return fmt.Sprintf("`baselines/sim.txt` holds %d benchmarks and %d rows with a direction. The gate judges %d of them, "+
		"the headline metrics, in %d profiles (at most %d a profile), and %d tail rows (TTFT, TPOT and ITL p99) in %d tail tests, "+
		"one a profile and metric; the other %d are reported. The correction's first step "+
		"over a profile's rows times the profiles (%d tests) asks for p < %.1e, which the exact U test reaches from %d runs a "+
		"side (min_samples is %d). The baseline against itself: %s (exit %d).",
		len(benches), directed, rep.Comparisons, profiles, largest, countIf(rep.Rows, func(r Row) bool { return r.Tail }), tails,
		directed-rep.Comparisons-countIf(rep.Rows, func(r Row) bool { return r.Tail }),
		m, g.Alpha/float64(m), MinRuns(g, m), g.MinSamples, rep.Headline(), rep.Outcome().ExitCode())
}
