package predict

import (
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

func TestPresetFor(t *testing.T) {
	for _, tc := range []struct{ device, want, err string }{
		{device: "NVIDIA H100 80GB HBM3", want: "h100"},
		{device: "NVIDIA H100 80GB HBM3 x8", want: "h100"}, // the key's name and count
		{device: "NVIDIA H200", want: "h200"},
		{device: "NVIDIA A100-SXM4-80GB", want: "a100"}, // an A100 is no A10
		{device: "NVIDIA A10G", want: "a10"},
		{device: "NVIDIA L40S", want: "l40s"}, // an L40S is no L4
		{device: "NVIDIA L4", want: "l4"},
		{device: "NVIDIA GeForce RTX 4090", want: "rtx4090"},
		{device: "sim:h200", want: "h200"},             // the simulator's gpu line
		{device: "rtx4090-seed", want: "rtx4090-seed"}, // a preset's own name
		{device: "none", err: "set VLLMPERF_GPU_NAME"},
		{device: "", err: "nvidia-smi found none"},
		{device: "Tesla V100-SXM2-16GB", err: `GPU "Tesla V100-SXM2-16GB" has no simulator preset`},
	} {
		got, err := PresetFor(tc.device)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "h100") {
				t.Errorf("PresetFor(%q) = %q, %v: want an error with %q listing the presets", tc.device, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("PresetFor(%q) = %q, %v: want %q", tc.device, got, err, tc.want)
		}
	}
}

func TestModelledStartup(t *testing.T) {
	h100, _ := presets.LookupGPU("h100")
	small, _ := presets.LookupModel("Qwen/Qwen3-0.6B")
	big, _ := presets.LookupModel("meta-llama/Llama-3.1-70B-Instruct")
	// docs/gpu-runners.md: Qwen3-0.6B on an H100, warm cache, one to two minutes.
	if d := ModelledStartup(h100, small, 1); d < time.Minute || d > 2*time.Minute {
		t.Errorf("Qwen3-0.6B on one H100: %v, want one to two minutes", d)
	}
	one, four := ModelledStartup(h100, big, 1), ModelledStartup(h100, big, 4)
	if !(four < one && one > ModelledStartup(h100, small, 1)) {
		t.Errorf("70B: %v on 1 GPU, %v on 4: want longer than the small model and shorter over 4 GPUs", one, four)
	}
	if d := ModelledStartup(h100, presets.ModelPreset{}, 1); d != StartupFixed {
		t.Errorf("unknown model: %v, want StartupFixed %v", d, StartupFixed)
	}
}

// Every default scenario's points are predicted in simulated time, the
// same twice (seeded), and each prediction makes sense: every measured
// request sent, a longer point for more requests one at a time. Quick
// size, and full size for the scenarios whose request counts it checks.
func TestPredictProfile(t *testing.T) {
	p, err := profile.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	var scs []*scenario.Scenario
	for _, n := range scenario.DefaultNames() {
		sc, err := scenario.Builtin(n)
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	s := Settings{Preset: "h100", Size: scenario.Quick, Seed: 1}
	a, err := PredictProfile(p, scs, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := PredictProfile(p, scs, s)
	if err != nil {
		t.Fatal(err)
	}
	if a.Each() != b.Each() || a.Each() <= a.Start || a.StartFrom != Modelled {
		t.Errorf("two predictions %v and %v: want the same, above the modelled start %v (%s)", a.Each(), b.Each(), a.Start, a.StartFrom)
	}
	if a.GPUs != 1 {
		t.Errorf("basic holds %d GPUs, want 1", a.GPUs)
	}
	for _, pt := range a.Points {
		if pt.Measured <= 0 || pt.Requests == 0 {
			t.Errorf("%s/%s: %v for %d requests", pt.Scenario, pt.Key, pt.Measured, pt.Requests)
		}
	}
	sim, err := PredictProfile(p, scs[:1], Settings{Preset: "h100", Size: scenario.Quick, Seed: 1, Simulator: true})
	if err != nil || sim.Start != 0 || sim.StartFrom != SimStartup {
		t.Errorf("on the simulator: start %v (%s), %v: want its --sim-startup, 0", sim.Start, sim.StartFrom, err)
	}

	// Full size, the points whose request counts the scenarios fix
	// (concurrency-sweep.yaml: 8 waves, at least 32 requests).
	opts, err := config.ParseArgs(append([]string{p.Model}, append(p.SimArgs(), "--sim-gpu", "h100")...))
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Point{}
	for key, want := range map[string]int{"concurrency-sweep/conc=1": 32, "concurrency-sweep/conc=2": 32, "poisson/rate=4": 200} {
		name, point, _ := strings.Cut(key, "/")
		sc, err := scenario.Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, pt := range sc.Points(scenario.Full) {
			if pt.Key == point {
				byKey[key], err = PredictPoint(opts.Config, p.ServedName(), pt, 1)
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := byKey[key].Requests; got != want {
			t.Errorf("%s: %d requests, want %d", key, got, want)
		}
	}
	// 200 Poisson arrivals at 4/s last about 50 s whatever the GPU.
	if d := byKey["poisson/rate=4"].Measured; d < 35*time.Second || d > 70*time.Second {
		t.Errorf("poisson/rate=4: %v, want about 50 s", d)
	}
	// 32 requests one at a time take longer than 32 two at a time.
	if byKey["concurrency-sweep/conc=2"].Measured >= byKey["concurrency-sweep/conc=1"].Measured {
		t.Errorf("conc=2 %v not below conc=1 %v", byKey["concurrency-sweep/conc=2"].Measured, byKey["concurrency-sweep/conc=1"].Measured)
	}
	if _, err := PredictProfile(p, scs, Settings{Preset: "v100", Size: scenario.Quick}); err == nil || !strings.Contains(err.Error(), "v100") {
		t.Errorf("an unknown preset: %v, want an error naming it", err)
	}
}
