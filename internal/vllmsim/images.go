package vllmsim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image"
	_ "image/gif"  // decode GIF data URLs' sizes
	_ "image/jpeg" // decode JPEG data URLs' sizes
	_ "image/png"  // decode PNG data URLs' sizes
	"math/rand/v2"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// Images in chat requests follow vLLM 0.11 (commit 005a810bc40f): a
// message's content parts of type image_url carry the image, here a
// data: URL (the simulator reaches no network); --limit-mm-per-prompt
// ('{"image": N}', or the older image=N) caps the images of one request
// (V1's default: 999 each), refused with vLLM's "At most N image(s) may
// be provided in one prompt."; a model without a vision encoder takes no
// image. Each image adds the processor's placeholder tokens to the prompt
// (presets.VisionEncoder.ImageTokens), ids drawn from its bytes so that
// different images never share a prefix-cache block, and its patches to
// the encoder's work.

// images are a request's images as the engine takes them.
type images struct {
	tokens  []int32 // placeholder tokens, every image's in order
	patches int     // the encoder's patches
}

// parseImages reads the image_url parts of a chat body's messages.
func (s *Server) parseImages(body []byte) (images, *apiError) {
	var req struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	var out images
	if json.Unmarshal(body, &req) != nil {
		return out, nil // parseChat has said what is wrong
	}
	var urls []string
	for _, m := range req.Messages {
		var parts []struct {
			Type     string `json:"type"`
			ImageURL *struct {
				URL string `json:"url"`
			} `json:"image_url"`
		}
		if json.Unmarshal(m.Content, &parts) != nil {
			continue // a string content
		}
		for _, p := range parts {
			if p.Type != "image_url" {
				continue
			}
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return out, badRequest("messages", "an image_url part needs {\"image_url\": {\"url\": ...}}")
			}
			urls = append(urls, p.ImageURL.URL)
		}
	}
	if len(urls) == 0 {
		return out, nil
	}
	v := s.info.Model.Vision
	if v == nil {
		return out, badRequest("messages", "%s is not a multimodal model: it takes no image (vllm-sim's vision presets: %s)", s.info.Config.Model, strings.Join(visionPresets(), ", "))
	}
	if limit := s.opts.EffectiveImageLimit(); len(urls) > limit {
		return out, badRequest("messages", "At most %d image(s) may be provided in one prompt.", limit)
	}
	for i, u := range urls {
		w, h, raw, err := dataImage(u)
		if err != nil {
			return out, badRequest("messages", "image %d: %v", i, err)
		}
		n, patches := v.ImageTokens(w, h)
		out.tokens = append(out.tokens, placeholders(raw, n, s.tok.Vocab())...)
		out.patches += patches
	}
	return out, nil
}

// dataImage decodes a data: URL's image size.
func dataImage(u string) (width, height int, raw []byte, err error) {
	meta, data, ok := strings.Cut(strings.TrimPrefix(u, "data:"), ",")
	if !strings.HasPrefix(u, "data:") || !ok || !strings.HasSuffix(meta, ";base64") {
		return 0, 0, nil, fmt.Errorf("vllm-sim reads base64 data: URLs only (data:image/jpeg;base64,...), not %q", clipURL(u))
	}
	raw, err = base64.StdEncoding.DecodeString(data)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("the data: URL is not base64: %v", err)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return 0, 0, nil, fmt.Errorf("cannot identify image file: %v (send a JPEG, PNG or GIF)", err)
	}
	if cfg.Width < 1 || cfg.Height < 1 {
		return 0, 0, nil, fmt.Errorf("the image is %d×%d pixels", cfg.Width, cfg.Height)
	}
	return cfg.Width, cfg.Height, raw, nil
}

// placeholders are n token ids drawn from an image's bytes.
func placeholders(raw []byte, n, vocab int) []int32 {
	h := fnv.New64a()
	_, _ = h.Write(raw)
	r := rand.New(rand.NewPCG(h.Sum64(), 0x696d616765)) // "image"
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(r.IntN(vocab))
	}
	return out
}

// clipURL shortens a URL for a message.
func clipURL(u string) string {
	if len(u) > 48 {
		return u[:48] + "…"
	}
	return u
}

// visionPresets are the model presets with a vision encoder.
func visionPresets() []string {
	var out []string
	for _, n := range presets.ModelPresetNames() {
		if m, _ := presets.LookupModel(n); m.Vision != nil {
			out = append(out, n)
		}
	}
	return out
}
