package replay

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine"
)

// The fit: `go test ./internal/vllmsim/replay/ -run TestFit -fit rtx4090
// [-fit.params StepOverhead,DecodeEfficiency]` searches a GPU preset's timing
// parameters on the fit rows of that preset only (check rows are never
// replayed here) and prints the values found, for presets.go. The search is
// a deterministic coordinate descent: each parameter in turn is multiplied
// and divided by a step factor (1.5, then 1.2, 1.08, 1.03) and the change
// kept when the loss falls, until no change helps at the finest step. The
// loss sums, over the fit rows' compared figures, (error ÷ tolerance)² plus
// 4 × (excess over the tolerance)², so figures outside the tolerance weigh
// most; its replays run without noise (noJitter).
var (
	fitPreset = flag.String("fit", "", "GPU preset whose timing parameters TestFit searches on the fit set")
	fitParams = flag.String("fit.params", "", "comma-separated parameters to search (default: all of fitParameters)")
)

// param is one searchable parameter of a GPU preset.
type param struct {
	name     string
	get      func(g *engine.GPUPreset) float64
	set      func(g *engine.GPUPreset, v float64)
	min, max float64
}

func durParam(name string, f func(g *engine.GPUPreset) *time.Duration, lo, hi time.Duration) param {
	return param{name,
		func(g *engine.GPUPreset) float64 { return float64(*f(g)) },
		func(g *engine.GPUPreset, v float64) { *f(g) = time.Duration(math.Round(v)) },
		float64(lo), float64(hi)}
}

func floatParam(name string, f func(g *engine.GPUPreset) *float64, lo, hi float64) param {
	return param{name,
		func(g *engine.GPUPreset) float64 { return *f(g) },
		func(g *engine.GPUPreset, v float64) { *f(g) = v },
		lo, hi}
}

// fitParameters are the parameters TestFit can search, with their bounds.
var fitParameters = []param{
	floatParam("PrefillEfficiency", func(g *engine.GPUPreset) *float64 { return &g.PrefillEfficiency }, 0.1, 0.9),
	floatParam("PrefillSmallModelExponent", func(g *engine.GPUPreset) *float64 { return &g.PrefillSmallModelExponent }, 0.05, 3),
	floatParam("DecodeEfficiency", func(g *engine.GPUPreset) *float64 { return &g.DecodeEfficiency }, 0.4, 1),
	durParam("StepOverhead", func(g *engine.GPUPreset) *time.Duration { return &g.StepOverhead }, 50*time.Microsecond, 30*time.Millisecond),
	durParam("SeqOverhead", func(g *engine.GPUPreset) *time.Duration { return &g.SeqOverhead }, 0, 2*time.Millisecond),
	durParam("CPUStepOverhead", func(g *engine.GPUPreset) *time.Duration { return &g.CPUStepOverhead }, 50*time.Microsecond, 30*time.Millisecond),
	durParam("PerSeqOverhead", func(g *engine.GPUPreset) *time.Duration { return &g.PerSeqOverhead }, time.Microsecond, 5*time.Millisecond),
	durParam("Frontend.Latency", func(g *engine.GPUPreset) *time.Duration { return &g.Frontend.Latency }, 0, 200*time.Millisecond),
	durParam("Frontend.Base", func(g *engine.GPUPreset) *time.Duration { return &g.Frontend.Base }, 100*time.Microsecond, 200*time.Millisecond),
	durParam("Frontend.PerPromptToken", func(g *engine.GPUPreset) *time.Duration { return &g.Frontend.PerPromptToken }, 10*time.Nanosecond, 200*time.Microsecond),
	durParam("Frontend.PerOutputToken", func(g *engine.GPUPreset) *time.Duration { return &g.Frontend.PerOutputToken }, 100*time.Nanosecond, 5*time.Millisecond),
	floatParam("Frontend.SlowDetokenizeFactor", func(g *engine.GPUPreset) *float64 { return &g.Frontend.SlowDetokenizeFactor }, 1, 100),
}

func TestFit(t *testing.T) {
	if *fitPreset == "" {
		t.Skip("run with -fit PRESET to search a GPU preset's timing parameters on the fit set")
	}
	rows, err := calibration.Load()
	if err != nil {
		t.Fatal(err)
	}
	var fit []calibration.Row
	for _, rp := range Replayable(rows) {
		if r := rp.Row; r.Split == calibration.Fit && r.Hardware.GPU == *fitPreset {
			fit = append(fit, r)
		}
	}
	if len(fit) == 0 {
		t.Fatalf("no runnable fit row on GPU preset %s", *fitPreset)
	}
	params := fitParameters
	if *fitParams != "" {
		params = nil
		for _, name := range strings.Split(*fitParams, ",") {
			found := false
			for _, p := range fitParameters {
				if p.name == name {
					params, found = append(params, p), true
				}
			}
			if !found {
				t.Fatalf("-fit.params: no parameter %q", name)
			}
		}
	}
	g, _ := engine.LookupGPU(*fitPreset)
	best := g
	bestLoss := fitLoss(t, fit, best)
	t.Logf("start: loss %.3f", bestLoss)
	for _, step := range []float64{1.5, 1.2, 1.08, 1.03} {
		for improved := true; improved; {
			improved = false
			for _, p := range params {
				for _, f := range []float64{step, 1 / step} {
					cand := best
					v := p.get(&cand)
					if v == 0 {
						v = math.Max(p.min, 1000) // a zero duration starts its search at 1 µs
					}
					p.set(&cand, math.Max(p.min, math.Min(p.max, v*f)))
					if p.get(&cand) == p.get(&best) {
						continue
					}
					if l := fitLoss(t, fit, cand); l < bestLoss-1e-9 {
						best, bestLoss, improved = cand, l, true
						t.Logf("step %.2f: %s = %s, loss %.3f", step, p.name, show(p, &best), l)
					}
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: loss %.3f\n", *fitPreset, bestLoss)
	for _, p := range params {
		fmt.Fprintf(&b, "  %s = %s\n", p.name, show(p, &best))
	}
	for _, r := range fit {
		res, err := Replay(r, Options{GPU: &best})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range Compare(res) {
			fmt.Fprintf(&b, "  %-50s %-5s %8.1f → %8.1f (%+.0f%%)\n", r.ID, c.Metric, c.Published, c.Simulated, 100*c.Error())
		}
	}
	t.Log("\n" + b.String())
}

func show(p param, g *engine.GPUPreset) string {
	if !strings.Contains(p.name, "Overhead") && !strings.Contains(p.name, "Token") && p.name != "Frontend.Base" && p.name != "Frontend.Latency" {
		return fmt.Sprintf("%.3f", p.get(g))
	}
	return time.Duration(p.get(g)).String()
}

// noJitter makes the fit's replays deterministic in timing: with noise, a
// small change of a parameter moves the noise's draws to other steps and
// the loss jumps about.
var noJitter = 0.0

// fitLoss replays the rows with g, without noise, and sums the weighted
// errors.
func fitLoss(t *testing.T, rows []calibration.Row, g engine.GPUPreset) float64 {
	loss := 0.0
	for _, r := range rows {
		res, err := Replay(r, Options{GPU: &g, Jitter: &noJitter})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range Compare(res) {
			x := math.Abs(c.Error()) / c.Tolerance
			loss += x*x + 4*math.Pow(math.Max(0, x-1), 2)
		}
	}
	return loss
}
