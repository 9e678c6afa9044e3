package replay

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
)

func TestDebugBurst(t *testing.T) {
	rows, _ := calibration.Load()
	for _, r := range rows {
		if r.ID != "gpustack-h100-qwen3-8b-sharegpt-1000" && r.ID != "gpustack-h100-qwen3-8b-sharegpt-1000-kv-fp8" {
			continue
		}
		r.Workload.LengthsPublished = true
		r.Workload.TotalInputTokens = 23260 * 10
		r.Workload.TotalOutputTokens = 22061 * 10
		res, err := Replay(r, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: TTFT %+v TPOT %+v tok/s %.0f dur %v", r.ID, res.TTFT, res.TPOT, res.OutputThroughput, res.Duration)
		t.Logf("fe %v q %v pf %v eng %+v", res.FrontendMean, res.QueueMean, res.PrefillMean, res.Engine)
	}
}
