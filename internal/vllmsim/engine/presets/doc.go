// Package presets is the timing model's data: the GPU presets (datasheet
// figures and fitted costs, Costs and their plausible CostRanges), the
// model presets, the API server's FrontendPreset, and the vLLM Release
// whose release-dependent costs a preset takes. It imports nothing of the
// engine; the engine and the calibration replay read it.
package presets
