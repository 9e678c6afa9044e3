package calreplay

import (
	"math"
	"slices"
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// TestSelectByHeldOutLoss: cross-validation on two small sources (one
// figure searched, one step): each fold is fitted without its source's
// rows, the held-out loss is those rows' loss with that fold's costs, the
// chosen prior weight is the one with the least held-out loss, and the
// full fit takes every row.
func TestSelectByHeldOutLoss(t *testing.T) {
	testphase.Measured(t)
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	pick := map[string]bool{"vllm-perf-9515-h200-llama-3.1-8b-latency-32-128-b8": true, "wmx-l4-qwen2.5-0.5b-256-128-c2": true}
	var small []calibration.Row
	for _, r := range rows {
		if pick[r.ID] {
			small = append(small, r)
		}
	}
	if len(small) != 2 {
		t.Fatalf("want the 2 rows %v, found %d", pick, len(small))
	}
	o := FitOptions{Params: []string{"StepOverhead"}, Steps: []float64{1.3}}
	l, err := Select(small, []float64{0, 1000}, o)
	if err != nil {
		t.Fatal(err)
	}
	order, by := FitSources(small)
	if len(l.Candidates) != 2 || len(l.Full.Rows) != 2 {
		t.Fatalf("candidates %d, full fit on %v", len(l.Candidates), l.Full.Rows)
	}
	best := math.Inf(1)
	for _, c := range l.Candidates {
		best = math.Min(best, c.HeldOutLoss)
		if stale := c.stale(order, by); len(stale) > 0 {
			t.Errorf("prior %g: %v", c.Prior, stale)
		}
		sum := 0.0
		for _, f := range c.Folds {
			if slices.Contains(f.Rows, by[f.Source][0].ID) {
				t.Errorf("prior %g: fold without %s fitted on its row", c.Prior, f.Source)
			}
			costs, err := f.CostsOf(presets.NominalCosts())
			if err != nil {
				t.Fatal(err)
			}
			held, err := FitLoss(by[f.Source], costs)
			if err != nil {
				t.Fatal(err)
			}
			sum += held
		}
		if math.Abs(sum-c.HeldOutLoss) > 1e-9 {
			t.Errorf("prior %g: held-out loss %.6f, the folds' held-out rows give %.6f", c.Prior, c.HeldOutLoss, sum)
		}
	}
	if l.heldOut() != best {
		t.Errorf("chose prior %g (held-out %.3f), least is %.3f", l.Prior, l.heldOut(), best)
	}
	t.Logf("held-out loss: prior 0 %.3f, prior 1000 %.3f; chose %g", l.Candidates[0].HeldOutLoss, l.Candidates[1].HeldOutLoss, l.Prior)
}

// TestStaleChoice: loso.yaml matches the data, and a choice that is not the
// least held-out loss, or a fold fitted on a held-out source's rows, is
// reported stale.
func TestStaleChoice(t *testing.T) {
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	l, err := ReadLOSO()
	if err != nil {
		t.Fatal(err)
	}
	if stale := l.StaleFolds(rows); len(stale) > 0 {
		t.Fatalf("shipped loso.yaml is stale: %v", stale)
	}
	if len(l.Candidates) < 2 {
		t.Fatalf("%d candidates, want the prior weights of FitPriors (%v)", len(l.Candidates), FitPriors)
	}
	for _, c := range l.Candidates {
		if c.Prior == l.Prior {
			continue
		}
		wrong := l
		wrong.Prior = c.Prior
		if len(wrong.StaleFolds(rows)) == 0 {
			t.Errorf("choosing prior %g (held-out %.3f) over the least was not reported", c.Prior, c.HeldOutLoss)
		}
	}
	leaky := l
	leaky.Candidates = slices.Clone(l.Candidates)
	chosen := slices.IndexFunc(leaky.Candidates, func(c Candidate) bool { return c.Prior == l.Prior })
	folds := slices.Clone(leaky.Candidates[chosen].Folds)
	folds[0].Rows = append(slices.Clone(folds[0].Rows), l.Full.Rows[0])
	leaky.Candidates[chosen].Folds = folds
	if len(leaky.StaleFolds(rows)) == 0 {
		t.Error("a fold fitted on another row set than its training rows was not reported")
	}
}
