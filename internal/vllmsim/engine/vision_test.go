package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/vllmsim/engine/presets"
)

// TestImageCostsTimeToFirstToken: at concurrency 1 on the Qwen2.5-VL
// preset, an 896×896 image (1024 tokens, 4096 encoder patches) takes the
// first token at least 1.3 times as long as a 224×224 one (64 tokens, 256
// patches): the encoder and the longer prefill both count.
func TestImageCostsTimeToFirstToken(t *testing.T) {
	m, ok := presets.LookupModel("Qwen/Qwen2.5-VL-3B-Instruct")
	require.True(t, ok)
	ttft := func(side int) float64 {
		cfg := defaultCfg()
		cfg.Model, cfg.MaxModelLen, cfg.Jitter, cfg.ColdStart = m.Name, 4096, 0, 0
		s := newSim(t, cfg, nil)
		tokens, patches := m.Vision.ImageTokens(side, side)
		var arr []simReq
		for k := range 5 {
			arr = append(arr, simReq{at: 0, class: "x", req: Request{PromptTokens: prompt(64+tokens, 1000*k), MaxTokens: 4, IgnoreEOS: true, EncoderPatches: patches, Chat: true}})
		}
		// one at a time: each arrives when the one before it is done
		s.run(arr[:1], func(done *simRec) *simReq {
			if len(s.recs) >= len(arr) {
				return nil
			}
			return &arr[len(s.recs)]
		})
		var d []time.Duration
		for _, r := range s.recs {
			d = append(d, r.ttft())
		}
		return ms(pct(d, 50))
	}
	small, big := ttft(224), ttft(896)
	t.Logf("median TTFT: 224² %.2f ms, 896² %.2f ms (%.2f×)", small, big, big/small)
	assert.GreaterOrEqual(t, big/small, 1.3)
}
