package replay

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/vllmsim/calibration"
)

func TestDebugRow(t *testing.T) {
	rows, _ := calibration.Load()
	j := 0.0
	for _, r := range rows {
		if r.ID != "mushfiqrahman-rtx4090-mistral-7b-256-128-c4" {
			continue
		}
		res, err := Replay(r, Options{Jitter: &j})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", res.TTFT)
		t.Logf("fe %v q %v pf %v eng %+v dur %v", res.FrontendMean, res.QueueMean, res.PrefillMean, res.Engine, res.Duration)
	}
}
