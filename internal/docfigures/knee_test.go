package docfigures

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// TestFiguresKnee computes docs/suite.md's sentences on the knee and on
// max-num-seqs from the committed simulator baseline (baselines/sim.txt,
// medians of its 10 runs), as TestFiguresProfiles computes the table.
func TestFiguresKnee(t *testing.T) {
	t.Parallel()
	med := readMedians(t, filepath.Join(ModuleRoot(t), "baselines", "sim.txt"))
	knee, err := kneeSentence(med)
	if err != nil {
		t.Fatal(err)
	}
	Sync(t, "docs/suite.md", "knee", knee)
	gain, err := maxSeqsGain(med)
	if err != nil {
		t.Fatal(err)
	}
	Sync(t, "docs/suite.md", "max-num-seqs-gain", gain)
}

// sweepPoint names the concurrency sweep's point at conc c.
func sweepPoint(c float64) string {
	return fmt.Sprintf("scenario=concurrency-sweep/conc=%.0f", c)
}

// kneeSentence says, for the profiles grouped by their saturation point S,
// what the doubling into S bought (tok/s) and cost (P99 end-to-end
// latency), and each profile's recommended limit.
func kneeSentence(med medians) (string, error) {
	const summary = "scenario=concurrency-sweep/summary=knee"
	type change struct{ tok, e2el []float64 }
	bySat := map[float64]*change{}
	byRec := map[float64][]string{}
	var sats []float64
	for _, p := range med.profiles {
		sat, rec := med.get(p, summary, units.Saturation), med.get(p, summary, units.Recommended)
		if math.IsNaN(sat) || math.IsNaN(rec) {
			return "", fmt.Errorf("baselines/sim.txt: profile %s has no %s/%s on %s: record the baseline again (make baseline)", p, units.Saturation, units.Recommended, summary)
		}
		tokA, tokB := med.get(p, sweepPoint(sat/2), units.TokPerSec), med.get(p, sweepPoint(sat), units.TokPerSec)
		e2A, e2B := med.get(p, sweepPoint(sat/2), units.E2ELP99), med.get(p, sweepPoint(sat), units.E2ELP99)
		if slices.ContainsFunc([]float64{tokA, tokB, e2A, e2B}, math.IsNaN) {
			return "", fmt.Errorf("baselines/sim.txt: profile %s lacks the sweep's points at %.0f and %.0f", p, sat/2, sat)
		}
		c, ok := bySat[sat]
		if !ok {
			c = &change{}
			bySat[sat] = c
			sats = append(sats, sat)
		}
		c.tok = append(c.tok, 100*(tokB/tokA-1))
		c.e2el = append(c.e2el, 100*(e2B/e2A-1))
		byRec[rec] = append(byRec[rec], p)
	}
	slices.Sort(sats)
	var parts []string
	for _, s := range sats {
		c := bySat[s]
		parts = append(parts, fmt.Sprintf("saturation at %.0f (%.0f → %.0f bought %s %% tok/s while P99 end-to-end latency grew %s %%)",
			s, s/2, s, span(c.tok), span(c.e2el)))
	}
	recs := make([]float64, 0, len(byRec))
	for r := range byRec {
		recs = append(recs, r)
	}
	slices.Sort(recs)
	var rparts []string
	for _, r := range recs {
		rparts = append(rparts, fmt.Sprintf("%.0f for %s", r, strings.Join(byRec[r], ", ")))
	}
	return strings.Join(parts, "; ") + ", recommended limit " + strings.Join(rparts, "; "), nil
}

// span writes a range of percentages: "+14–21" (or "+14" when equal).
func span(v []float64) string {
	lo, hi := slices.Min(v), slices.Max(v)
	if fmt.Sprintf("%.0f", lo) == fmt.Sprintf("%.0f", hi) {
		return fmt.Sprintf("%+.0f", lo)
	}
	return fmt.Sprintf("%+.0f–%.0f", lo, hi)
}

// maxSeqsGain is high-throughput's tok/s over low-latency's at
// concurrency 32 (max-num-seqs 64 against 16).
func maxSeqsGain(med medians) (string, error) {
	ht, ll := med.get("high-throughput", sweepPoint(32), units.TokPerSec), med.get("low-latency", sweepPoint(32), units.TokPerSec)
	if math.IsNaN(ht) || math.IsNaN(ll) {
		return "", fmt.Errorf("baselines/sim.txt: no %s for high-throughput and low-latency at %s", units.TokPerSec, sweepPoint(32))
	}
	return fmt.Sprintf("%.2f×, high-throughput's tok/s over low-latency's at concurrency 32", ht/ll), nil
}
