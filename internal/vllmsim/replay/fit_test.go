package replay

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// The fit: `make fit` (go test ./internal/vllmsim/replay/ -run TestFit -fit
// all) fits engine.Costs on every fit row (the full fit, for presets.go's
// FittedCosts) and then once per source without that source's rows (the
// leave-one-source-out folds), and writes loso.yaml. -fit full runs the
// full fit only, -fit SOURCE one fold; -fit.params A,B searches only those
// figures. Check rows are never replayed here (Fit and Replay refuse them).
var (
	fitWhat   = flag.String("fit", "", "what TestFit fits: all (full fit and every fold, writes loso.yaml), full, or a source id")
	fitParams = flag.String("fit.params", "", "comma-separated costs to search (default: every one of engine.CostRanges)")
)

func TestFit(t *testing.T) {
	if *fitWhat == "" {
		t.Skip("run with -fit all|full|SOURCE (make fit)")
	}
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	var params []string
	if *fitParams != "" {
		params = strings.Split(*fitParams, ",")
	}
	order, by := FitSources(rows)
	train := func(skip string) []calibration.Row {
		var out []calibration.Row
		for _, s := range order {
			if s != skip {
				out = append(out, by[s]...)
			}
		}
		return out
	}
	fit := func(name string, rows []calibration.Row, start engine.Costs, steps []float64) Fold {
		c, loss, err := Fit(rows, start, params, steps, func(f string, a ...any) { t.Logf(name+": "+f, a...) })
		if err != nil {
			t.Fatal(err)
		}
		c = Rounded(c)
		var b strings.Builder
		fmt.Fprintf(&b, "%s: loss %.3f on %d rows\n", name, loss, len(rows))
		for _, cr := range engine.CostRanges {
			fmt.Fprintf(&b, "  %s = %s\n", cr.Name, ShowCost(cr, &c))
		}
		t.Log("\n" + b.String())
		return Fold{Rows: rowIDs(rows), Loss: loss, Costs: costsMap(c)}
	}
	switch *fitWhat {
	case "full":
		fit("full", train(""), engine.FittedCosts, FitSteps)
	case "all":
		l := LOSO{Full: fit("full", train(""), engine.FittedCosts, FitSteps[1:2])}
		full, err := l.Full.CostsOf(engine.FittedCosts)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range order {
			// Each fold starts from the full fit: the search is the same, only
			// shorter (a fold's optimum is near the full one's).
			f := fit("without "+s, train(s), full, FitSteps[1:2])
			f.Source = s
			l.Folds = append(l.Folds, f)
		}
		out, err := yaml.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		head := "# Written by `make fit` (TestFit -fit all): the full fit on every fit row\n" +
			"# (engine.FittedCosts must equal it) and the leave-one-source-out folds,\n" +
			"# each fitted without one source's rows. Do not edit by hand.\n"
		if err := os.WriteFile(losoPath, append([]byte(head), out...), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: put the full fit's costs into engine.FittedCosts (presets.go), then make calibrate", losoPath)
	default:
		if _, ok := by[*fitWhat]; !ok {
			t.Fatalf("-fit %s: no source with fit rows (have: all, full, %s)", *fitWhat, strings.Join(order, ", "))
		}
		fit("without "+*fitWhat, train(*fitWhat), engine.FittedCosts, FitSteps)
	}
}

// TestCheckRowsRefuseCandidates: no fitting run, nor a debugging test, can
// replay a check row with anything but the shipped presets.
func TestCheckRowsRefuseCandidates(t *testing.T) {
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	c := engine.FittedCosts
	for _, r := range calibration.CheckRows(rows) {
		if _, err := Replay(r, Options{Costs: &c}); err == nil {
			t.Errorf("check row %s replayed with candidate costs", r.ID)
		}
		if _, _, err := Fit([]calibration.Row{r}, c, nil, FitSteps, nil); err == nil {
			t.Errorf("check row %s fitted", r.ID)
		}
	}
}

// TestLOSOInRange: every fold's costs lie in engine.CostRanges, as the
// shipped ones must (engine's TestCostsInRange).
func TestLOSOInRange(t *testing.T) {
	l, err := ReadLOSO()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append([]Fold{l.Full}, l.Folds...) {
		c, err := f.CostsOf(engine.FittedCosts)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.InRange(); err != nil {
			t.Errorf("fold %q: %v", f.Source, err)
		}
	}
}
