package knee

import (
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// seed is the shape of the seed article's table (tok/s and P99 E2EL in ns
// against concurrency): linear to 8, near saturation at 16.
func seed() []Point {
	row := func(c int, tps float64, p99 time.Duration) Point {
		return Point{Concurrency: c, Metrics: map[string]float64{"tok/s": tps, "e2el-p99-ns": float64(p99)}}
	}
	return []Point{
		row(32, 470, 10*time.Second),
		row(1, 51, 3*time.Second),
		row(2, 101, 3*time.Second),
		row(4, 200, 3100*time.Millisecond),
		row(8, 398, 3200*time.Millisecond),
		row(16, 443, 5400*time.Millisecond),
	}
}

func ptr(v float64) *float64 { return &v }

func TestFind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                            string
		slo                             map[string]thresholds.Limit
		wantKnee, wantSat, wantSLO, rec int
		wantText                        string
	}{
		// No SLO: the limit is the knee, the point before saturation.
		{"no slo", nil, 8, 16, 0, 8, "saturation at concurrency 16: going from 8 to 16 bought +11% tok/s"},
		// A loose SLO met up to 16: the knee is still lower.
		{"loose slo", map[string]thresholds.Limit{"e2el-p99-ns": {Max: ptr(float64(6 * time.Second))}}, 8, 16, 16, 8, "highest concurrency meeting the SLO: 16"},
		// A tight SLO met only up to 4: the SLO decides.
		{"tight slo", map[string]thresholds.Limit{"e2el-p99-ns": {Max: ptr(float64(3100 * time.Millisecond))}}, 8, 16, 4, 4, "concurrency 8 breaks the SLO: e2el-p99-ns = 3.2s is above the limit 3.1s"},
		// An SLO no point meets: no limit can be recommended from it.
		{"impossible slo", map[string]thresholds.Limit{"e2el-p99-ns": {Max: ptr(float64(time.Second))}}, 8, 16, 0, 0, "no recommended concurrency limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := Find(seed(), thresholds.DefaultKnee, tc.slo)
			if r.Knee != tc.wantKnee || r.Saturation != tc.wantSat || r.SLOMax != tc.wantSLO || r.Recommended != tc.rec {
				t.Errorf("got knee %d saturation %d slo %d recommended %d, want %d %d %d %d", r.Knee, r.Saturation, r.SLOMax, r.Recommended, tc.wantKnee, tc.wantSat, tc.wantSLO, tc.rec)
			}
			if text := strings.Join(r.Explanation, "\n"); !strings.Contains(text, tc.wantText) {
				t.Errorf("explanation:\n%s\nwant it to contain %q", text, tc.wantText)
			}
		})
	}
}

func TestNoSaturation(t *testing.T) {
	t.Parallel()
	pts := seed()[1:4] // 1, 2, 4: linear
	r := Find(pts, thresholds.DefaultKnee, nil)
	if r.Knee != 0 || r.Saturation != 0 || r.Recommended != 0 {
		t.Errorf("linear sweep: %+v", r)
	}
	if text := strings.Join(r.Explanation, "\n"); !strings.Contains(text, "no saturation up to concurrency 4") {
		t.Errorf("explanation: %s", text)
	}
	if len(r.Steps) != 2 || r.Steps[0].Gain < 0.9 {
		t.Errorf("steps: %+v", r.Steps)
	}
}

func TestMissingMetric(t *testing.T) {
	t.Parallel()
	pts := seed()
	delete(pts[0].Metrics, "tok/s")
	r := Find(pts, thresholds.DefaultKnee, nil)
	if text := strings.Join(r.Explanation, "\n"); !strings.Contains(text, "concurrency 32 lacks tok/s or e2el-p99-ns: left out") {
		t.Errorf("explanation: %s", text)
	}
}
