package vllmsim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/vllmsim/config"
	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// pngURL is a data: URL of a blank w × h PNG.
func pngURL(t *testing.T, w, h int) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))))
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

// imageBody is a chat request with a text part and images.
func imageBody(text string, urls ...string) string {
	parts := []map[string]any{{"type": "text", "text": text}}
	for _, u := range urls {
		parts = append(parts, map[string]any{"type": "image_url", "image_url": map[string]string{"url": u}})
	}
	b, _ := json.Marshal(map[string]any{"messages": []any{map[string]any{"role": "user", "content": parts}}, "max_tokens": 2})
	return string(b)
}

// TestQwen25VLImageTokens: the processor's smart_resize, as Qwen2.5-VL's
// image processor computes it.
func TestQwen25VLImageTokens(t *testing.T) {
	m, ok := presets.LookupModel("Qwen/Qwen2.5-VL-3B-Instruct")
	require.True(t, ok)
	for _, tc := range []struct {
		w, h, tokens, patches int
	}{
		{224, 224, 64, 256},        // 8 × 8 merged patches of 28 px
		{896, 896, 1024, 4096},     // 32 × 32
		{640, 480, 391, 1564},      // 644 × 476: 23 × 17
		{10, 10, 4, 16},            // below min_pixels: up to 56 × 56
		{8192, 8192, 16384, 65536}, // above max_pixels: down to 3584 × 3584
	} {
		tokens, patches := m.Vision.ImageTokens(tc.w, tc.h)
		assert.Equal(t, tc.tokens, tokens, "%d×%d tokens", tc.w, tc.h)
		assert.Equal(t, tc.patches, patches, "%d×%d patches", tc.w, tc.h)
	}
}

func TestImages(t *testing.T) {
	t.Parallel()
	m := startSimRaw(t, "Qwen/Qwen2.5-VL-3B-Instruct", "--max-model-len", "4096", "--limit-mm-per-prompt", `{"image": 2}`, "--sim-fixed-ttft", "2ms", "--sim-fixed-itl", "1ms", "--disable-log-stats")
	small, big := pngURL(t, 224, 224), pngURL(t, 896, 896)
	for _, tc := range []struct {
		name   string
		body   string
		status int
		prompt int // usage.prompt_tokens, or the error's text
		msg    string
	}{
		{"a 224×224 image adds 64 tokens", imageBody("what is it", small), 200, 3 + 64, ""},
		{"an 896×896 one 1024", imageBody("what is it", big), 200, 3 + 1024, ""},
		{"two images, the limit", imageBody("compare", small, big), 200, 1 + 64 + 1024, ""},
		{"three: over the limit", imageBody("compare", small, small, small), 400, 0, "At most 2 image(s) may be provided in one prompt."},
		{"a URL the simulator cannot fetch", imageBody("x", "https://example.com/cat.jpg"), 400, 0, "data: URLs only"},
		{"bytes that are no image", imageBody("x", "data:image/png;base64,aGVsbG8="), 400, 0, "cannot identify image file"},
	} {
		status, body := m.post(t, "/v1/chat/completions", tc.body)
		require.Equal(t, tc.status, status, "%s: %s", tc.name, body)
		var r struct {
			Usage usage    `json:"usage"`
			Error apiError `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &r))
		if tc.msg != "" {
			assert.Contains(t, r.Error.Message, tc.msg, tc.name)
			continue
		}
		assert.Equal(t, tc.prompt, r.Usage.PromptTokens, tc.name)
	}
}

func init() {
	limit := func(n int) func(*config.Options) { return func(o *config.Options) { o.ImageLimit = &n } }
	parityCases["limit-mm-per-prompt"] = []parityValue{v(`{"image":2}`, true, limit(2)), v("image=4", true, limit(4)), syntax("lots"), syntax(`{"image":-1}`)}
}
