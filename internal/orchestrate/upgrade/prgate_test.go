package upgrade

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/orchestrate/perfgate"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/server"
	"github.com/vllmperf/vllmperf/internal/testphase"
)

// The PR gate's measurement (TestFiguresPRGate): its targets (issue 34)
// and the draws.
const (
	prGateGPU         = "NVIDIA H100 80GB HBM3" // the runner the targets are for
	prGateOneGPU      = 60 * time.Minute        // one GPU, predicted
	prGateEightGPUs   = 15 * time.Minute        // an 8-GPU runner, wall, predicted
	prGateCatch       = 80.0                    // % of +5% slowdowns failed, at least
	prGateFalseFail   = 2.0                     // % of unchanged runs failed, at most
	prGateRunnerGPUs  = 8
	prGateStartupNote = "start modelled: 60 s + weights at 2 GB/s (package predict)"
)

// prCandidate is one gate the PR default was chosen among.
type prCandidate struct {
	name     string
	profiles []string // nil: every built-in profile
	size     scenario.Size
	count    int
	starts   int // server starts a side (VLLMPERF_STARTS)
}

// prRow is a candidate's prediction and measured power.
type prRow struct {
	c                 prCandidate
	points, minCount  int
	oneGPU, eightGPUs time.Duration
	gpuMin            float64
	falseFail, catch5 float64
	power             prDesign
}

// TestFiguresPRGate (MEASURED: about a minute of one core) chooses the
// pull-request gate's default, perfgate.PRGate: for each candidate (which
// profiles, size, count, starts a side) the predicted time on an H100
// from the simulator's preset (perfgate.NewPrediction, simulated time),
// one GPU (profiles one after another) and an 8-GPU runner (profiles at
// once on one-GPU sets, VLLMPERF_GPU_SETS: the longest profile), and its
// power on the design perf-gate runs (prdesign_test.go: generated sides of
// the candidate's profiles, its starts a side, gate.Options{}). It checks
// docs/gpu-runners.md's table (make figures rewrites it) and fails when
// the PR default's prediction goes over 60 minutes on one GPU or 15 on
// eight, or its power misses the targets (+5% on every point failed ≥
// 80%, unchanged failed ≤ 2%).
func TestFiguresPRGate(t *testing.T) {
	testphase.Measured(t)
	set := qualityMeasurement(t)
	pr := perfgate.PRGate
	four := []string{"basic", "high-throughput", "low-latency", "memory-saving"}
	candidates := []prCandidate{
		{"every profile, quick size", nil, scenario.Quick, 10, 1},
		{"every profile, full size (the nightly gate)", nil, scenario.Full, 10, 1},
		{"four profiles, quick size", four, scenario.Quick, 10, 1},
		{"basic, high-throughput, low-latency, quick size, one start a side", pr.Profiles, pr.Size, pr.Count, 1},
		{"**" + pr.Name + "**: " + strings.Join(pr.Profiles, ", ") + ", quick size, " + prStartsWords(pr.Starts), pr.Profiles, pr.Size, pr.Count, pr.Starts},
	}
	var rows []prRow
	measured := map[string]prRow{}
	for _, c := range candidates {
		row := prRow{c: c}
		profs := c.profiles
		if profs == nil {
			profs = profile.Names()
		}
		cfg := suite.Config{Profiles: profs, Scenarios: scenario.DefaultNames(), Size: c.size, Backend: server.KindContainer, Thresholds: set}
		key := perfgate.Key{Runner: "r", GPU: prGateGPU + " x1", Backend: "container", Image: server.DefaultImage, Model: "default"}
		plan, err := perfgate.NewPlan(cfg, key, c.count, "")
		if err != nil {
			t.Fatal(err)
		}
		row.points, row.minCount = plan.Points, plan.MinCount
		pred := perfgate.NewPrediction(cfg, key, c.count, "")
		if pred.Err != nil {
			t.Fatal(pred.Err)
		}
		if len(pred.Capacity) > 0 {
			t.Fatalf("%s: capacity searches %v are not predicted: the candidate's time would be short", c.name, pred.Capacity)
		}
		row.oneGPU, row.gpuMin = pred.Wall(), pred.GPUMinutes()
		for i := range pred.Profiles {
			row.eightGPUs = max(row.eightGPUs, pred.Each(i)*time.Duration(c.count))
		}
		if len(profs) > prGateRunnerGPUs {
			t.Fatalf("%s: %d profiles on %d one-GPU sets: the 8-GPU wall would need rounds", c.name, len(profs), prGateRunnerGPUs)
		}
		// The size does not change the tests gated: one measurement per
		// profile set, count and starts (the generator's source is a
		// quick-size run).
		powerKey := fmt.Sprint(profs, c.count, c.starts)
		if m, ok := measured[powerKey]; ok {
			row.power, row.falseFail, row.catch5 = m.power, m.falseFail, m.catch5
			rows = append(rows, row)
			continue
		}
		row.power = prDesignPower(t, set, profs, c.count, c.starts, len(measured))
		row.falseFail, row.catch5 = pct(row.power.aaFails, prDesignAA), pct(row.power.slowFails, prDesignSlow)
		measured[powerKey] = row
		rows = append(rows, row)
	}
	docfigures.Sync(t, "docs/gpu-runners.md", "pr-gate", prTable(rows))
	got := rows[len(rows)-1]
	if got.c.count < got.minCount {
		t.Errorf("PR gate: count %d, but the gate needs %d to decide over its tests", got.c.count, got.minCount)
	}
	if got.oneGPU > prGateOneGPU {
		t.Errorf("PR gate: predicted %v on one H100, target ≤ %v", got.oneGPU.Round(time.Second), prGateOneGPU)
	}
	if got.eightGPUs > prGateEightGPUs {
		t.Errorf("PR gate: predicted %v wall on an 8-GPU runner, target ≤ %v", got.eightGPUs.Round(time.Second), prGateEightGPUs)
	}
	if got.catch5 < prGateCatch {
		t.Errorf("PR gate: +5%% on every point failed %.0f%%, target ≥ %.0f%%", got.catch5, prGateCatch)
	}
	if got.falseFail > prGateFalseFail {
		t.Errorf("PR gate: unchanged failed %.1f%%, target ≤ %.0f%%", got.falseFail, prGateFalseFail)
	}
}

// readSim reads baselines/sim.txt.
func readSim(t *testing.T) *input.Input {
	t.Helper()
	sim, err := input.ReadFile(filepath.Join(docfigures.ModuleRoot(t), "baselines", "sim.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

// prTable is docs/gpu-runners.md's table of the candidates.
func prTable(rows []prRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nPredicted on the simulator's preset for an %s (Qwen3-0.6B, every default scenario, %s); power on the design perf-gate runs: each side a generated run of the candidate's profiles (the gate-quality generator, `%s`), its starts a side drawn with the 2%% start spread, gated with `gate.Options{}` as perf-gate gates (%d decisions unchanged and %d at +5%% on every point a candidate; exact 95%% intervals; `go test -run TestFiguresPRGate ./internal/orchestrate/upgrade`)\n\n",
		prGateGPU, prGateStartupNote, prDesignSource, prDesignAA, prDesignSlow)
	b.WriteString("| gate | points a profile | count (the gate needs) | one GPU | 8-GPU runner (wall) | GPU-min | tests gated | unchanged failed | +5% failed | +5% failed per GPU-hour |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d (%d) | %v | %v | %.0f | %d | %s | %s | %.0f |\n", r.c.name, r.points, r.c.count, r.minCount,
			r.oneGPU.Round(time.Minute), r.eightGPUs.Round(time.Second), r.gpuMin, r.power.tests, cpWords(r.power.aaFails, prDesignAA), cpWords(r.power.slowFails, prDesignSlow), r.catch5/(r.gpuMin/60))
	}
	return b.String()
}

// prStartsWords names a preset's starts a side.
func prStartsWords(starts int) string {
	if starts <= 1 {
		return "one start a side"
	}
	return fmt.Sprintf("%d starts a side (VLLMPERF_STARTS=%d)", starts, starts)
}
