package predict

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// The start-up model, for a key with no measured start: a vLLM server's
// time to its first healthy /health is a fixed part (the container and
// the engine process, memory profiling, torch.compile from its cache,
// CUDA graph capture) and the weights read from a warm local cache.
// docs/gpu-runners.md: Qwen3-0.6B on an H100 with a warm cache is ready in
// one to two minutes; the model gives 61 s there. A cold cache (weights
// downloaded) takes longer: the first run's measured start replaces it.
const (
	// StartupFixed is the part of a start that does not grow with the model.
	StartupFixed = 60 * time.Second
	// WeightLoadBytesPerSec is each GPU's share of the weights read per
	// second (safetensors from a warm page cache or a local NVMe disk).
	WeightLoadBytesPerSec = 2e9
)

// ModelledStartup is the modelled start-up of model on tp GPUs of gpu:
// StartupFixed and the weights (2 bytes a parameter) at
// WeightLoadBytesPerSec per GPU. An unknown model (zero preset) is
// charged StartupFixed alone.
func ModelledStartup(gpu presets.GPUPreset, model presets.ModelPreset, tp int) time.Duration {
	_ = gpu // the same on every preset: the host's disk and the engine's set-up, not the GPU, dominate
	weights := 2 * model.Params / float64(max(tp, 1))
	return StartupFixed + time.Duration(weights/WeightLoadBytesPerSec*float64(time.Second))
}

// presetPatterns map a device name (nvidia-smi's name, VLLMPERF_GPU_NAME)
// to a simulator GPU preset, most specific first (an A100 is no A10, an
// L40S no L4).
var presetPatterns = []struct {
	re     *regexp.Regexp
	preset string
}{
	{regexp.MustCompile(`\bh200\b`), "h200"},
	{regexp.MustCompile(`\bh100\b`), "h100"},
	{regexp.MustCompile(`\ba100\b`), "a100"},
	{regexp.MustCompile(`\bl40s\b`), "l40s"},
	{regexp.MustCompile(`\ba10g?\b`), "a10"},
	{regexp.MustCompile(`\bl4\b`), "l4"},
	{regexp.MustCompile(`\b(rtx )?4090\b`), "rtx4090"},
}

// PresetFor maps a GPU's name to the simulator preset that models it:
// "NVIDIA H100 80GB HBM3 x8" → h100, "sim:h200" → h200, a preset's own
// name → itself. An empty or unknown name is an error that lists the
// presets and says how to name one.
func PresetFor(device string) (string, error) {
	name := strings.ToLower(strings.TrimSpace(device))
	name = strings.TrimPrefix(name, "sim:")
	if _, ok := presets.LookupGPU(name); ok {
		return name, nil
	}
	for _, p := range presetPatterns {
		if p.re.MatchString(name) {
			return p.preset, nil
		}
	}
	if name == "" || name == "none" || name == "unknown" {
		return "", fmt.Errorf("no GPU name to predict from: nvidia-smi found none; set VLLMPERF_GPU_NAME to the runner's GPU (e.g. \"NVIDIA H100 80GB HBM3\") or a simulator preset (%s)", strings.Join(presets.GPUPresetNames(), ", "))
	}
	return "", fmt.Errorf("GPU %q has no simulator preset: set VLLMPERF_GPU_NAME to the closest preset (%s)", device, strings.Join(presets.GPUPresetNames(), ", "))
}
