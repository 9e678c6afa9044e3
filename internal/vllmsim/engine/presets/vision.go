package presets

import "math"

// Vision models follow vLLM 0.11 (commit 005a810bc40f) and the Hugging
// Face Qwen2.5-VL image processor: an image is resized to a multiple of
// PatchSize × MergeSize (smart_resize, within MinPixels and MaxPixels),
// cut into PatchSize² patches for the vision encoder, and merged
// MergeSize² patches to one placeholder token of the language model. vLLM
// V1 runs the encoder for a request's images in the step that first
// schedules its prompt, before the language model's forward pass.

// VisionEncoder is a vision-language model's image encoder and processor.
type VisionEncoder struct {
	// PatchSize is the encoder's patch edge in pixels; MergeSize patches a
	// side merge into one placeholder token.
	PatchSize, MergeSize int
	// MinPixels and MaxPixels bound the resized image's area.
	MinPixels, MaxPixels int
	// Params are the encoder's parameters: 2 × Params FLOPs a patch.
	Params float64
	// Source says where the figures come from.
	Source string
}

// ImageTokens is the placeholder tokens and the encoder patches of an
// image of width × height pixels (the processor's smart_resize).
func (v VisionEncoder) ImageTokens(width, height int) (tokens, patches int) {
	f := float64(v.PatchSize * v.MergeSize)
	h, w := float64(height), float64(width)
	hb := math.Max(f, math.Round(h/f)*f)
	wb := math.Max(f, math.Round(w/f)*f)
	switch {
	case hb*wb > float64(v.MaxPixels):
		beta := math.Sqrt(h * w / float64(v.MaxPixels))
		hb = math.Max(f, math.Floor(h/beta/f)*f)
		wb = math.Max(f, math.Floor(w/beta/f)*f)
	case hb*wb < float64(v.MinPixels):
		beta := math.Sqrt(float64(v.MinPixels) / (h * w))
		hb = math.Ceil(h*beta/f) * f
		wb = math.Ceil(w*beta/f) * f
	}
	p := float64(v.PatchSize)
	patches = int(hb/p) * int(wb/p)
	return patches / (v.MergeSize * v.MergeSize), patches
}
