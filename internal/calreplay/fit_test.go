package calreplay

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// The fit: `make fit` (go test ./internal/calreplay/ -run TestFit -fit
// all) chooses the prior weight among FitPriors by leave-one-source-out
// cross-validation (a fold per source per weight), fits presets.Costs on
// every fit row with the chosen weight (the full fit, for presets.go's
// FittedCosts), and writes loso.yaml. -fit full runs the full fit only,
// -fit SOURCE one fold, both with loso.yaml's chosen weight; -fit.params
// A,B searches only those figures. Check rows are never replayed here (Fit
// and Replay refuse them).
var (
	fitWhat   = flag.String("fit", "", "what TestFit fits: all (cross-validation, full fit, writes loso.yaml), full, or a source id")
	fitParams = flag.String("fit.params", "", "comma-separated costs to search (default: every one of presets.CostRanges)")
)

func TestFit(t *testing.T) {
	if *fitWhat == "" {
		t.Skip("run with -fit all|full|SOURCE (make fit)")
	}
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	o := FitOptions{Logf: t.Logf}
	if *fitParams != "" {
		o.Params = strings.Split(*fitParams, ",")
	}
	order, by := FitSources(rows)
	if *fitWhat == "all" {
		l, err := Select(rows, FitPriors, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range l.Candidates {
			t.Logf("prior %g: held-out loss %.3f", c.Prior, c.HeldOutLoss)
		}
		logFold(t, l.Full)
		writeLOSO(t, l)
		return
	}
	cur, err := ReadLOSO()
	if err != nil {
		t.Fatal(err)
	}
	o.Prior = cur.Prior
	switch _, ok := by[*fitWhat]; {
	case *fitWhat == "full":
		f, err := fitFold("full", trainRows(order, by, ""), o)
		if err != nil {
			t.Fatal(err)
		}
		logFold(t, f)
	case ok:
		f, err := fitFold("without "+*fitWhat, trainRows(order, by, *fitWhat), o)
		if err != nil {
			t.Fatal(err)
		}
		logFold(t, f)
	default:
		t.Fatalf("-fit %s: no source with fit rows (have: all, full, %s)", *fitWhat, strings.Join(order, ", "))
	}
}

// logFold logs a fit's loss and costs.
func logFold(t *testing.T, f Fold) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: loss %.3f on %d rows\n", cmp.Or(f.Source, "full"), f.Loss, len(f.Rows))
	for _, cr := range presets.CostRanges {
		fmt.Fprintf(&b, "  %s = %s\n", cr.Name, f.Costs[cr.Name])
	}
	t.Log("\n" + b.String())
}

// writeLOSO writes l to loso.yaml.
func writeLOSO(t *testing.T, l LOSO) {
	out, err := yaml.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	head := "# Written by `make fit` (TestFit -fit all): the prior weights tried, each\n" +
		"# with its leave-one-source-out folds and held-out loss, the one chosen\n" +
		"# (least held-out loss) and the full fit with it (presets.FittedCosts must\n" +
		"# equal it). Do not edit by hand.\n"
	if err := os.WriteFile(losoPath, append([]byte(head), out...), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: put the full fit's costs into presets.FittedCosts (presets.go), then make calibrate", losoPath)
}

// TestCheckRowsRefuseCandidates: no fitting run, nor a debugging test, can
// replay a check row with anything but the shipped presets.
func TestCheckRowsRefuseCandidates(t *testing.T) {
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	c := presets.FittedCosts
	for _, r := range calibration.CheckRows(rows) {
		if _, err := Replay(r, Options{Costs: &c}); err == nil {
			t.Errorf("check row %s replayed with candidate costs", r.ID)
		}
		if _, _, err := Fit([]calibration.Row{r}, c, FitOptions{}); err == nil {
			t.Errorf("check row %s fitted", r.ID)
		}
		if _, err := CrossValidate([]string{"a", "b"}, map[string][]calibration.Row{"a": {r}, "b": {r}}, FitOptions{}); err == nil {
			t.Errorf("check row %s cross-validated", r.ID)
		}
	}
}

// TestLOSOInRange: every fold's costs lie in presets.CostRanges, as the
// shipped ones must (engine's TestCostsInRange).
func TestLOSOInRange(t *testing.T) {
	l, err := ReadLOSO()
	if err != nil {
		t.Fatal(err)
	}
	folds := []Fold{l.Full}
	for _, c := range l.Candidates {
		folds = append(folds, c.Folds...)
	}
	for _, f := range folds {
		c, err := f.CostsOf(presets.FittedCosts)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.InRange(); err != nil {
			t.Errorf("fold %q: %v", f.Source, err)
		}
	}
}

// BenchmarkFitLoss is one evaluation of the fit's objective: every fit row
// replayed without noise with the nominal costs. make fit evaluates it a few
// hundred times per fold, so its time sets make fit's.
func BenchmarkFitLoss(b *testing.B) {
	rows, err := calibration.Load()
	if err != nil {
		b.Fatal(err)
	}
	order, by := FitSources(rows)
	var fit []calibration.Row
	for _, s := range order {
		fit = append(fit, by[s]...)
	}
	c := presets.NominalCosts()
	for b.Loop() {
		if _, err := FitLoss(fit, c); err != nil {
			b.Fatal(err)
		}
	}
}
