package clock

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestPace: a step the loop reaches within CatchUpWindow of its schedule
// starts on it (nothing lost); reached later, it starts now and the time
// in between counts as lost, and the ratio gauge gives the time lost per
// second of activity once a window closes (a second of activity, or the
// engine going idle).
func TestPace(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	type call struct {
		sched, now time.Duration // sched < 0: no schedule (the engine was idle)
		want       time.Duration // the step's start
	}
	tests := []struct {
		name      string
		calls     []call
		closeAt   time.Duration // > 0: the engine goes idle then
		wantLost  time.Duration
		wantRatio float64
	}{
		{"idle start", []call{{-1, 0, 0}}, 0, 0, 0},
		{"on time", []call{{-1, 0, 0}, {5 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond}}, 0, 0, 0},
		{"early wake-up", []call{{-1, 0, 0}, {5 * time.Millisecond, 4 * time.Millisecond, 4 * time.Millisecond}}, 0, 0, 0},
		{"late within the window", []call{{-1, 0, 0}, {5 * time.Millisecond, 5*time.Millisecond + CatchUpWindow - 1, 5 * time.Millisecond}}, 0, 0, 0},
		{"late beyond the window", []call{{-1, 0, 0}, {5 * time.Millisecond, 8 * time.Millisecond, 8 * time.Millisecond}}, 0, 3 * time.Millisecond, 0},
		{"ratio when idle", []call{{-1, 0, 0}, {10 * time.Millisecond, 60 * time.Millisecond, 60 * time.Millisecond}},
			100 * time.Millisecond, 50 * time.Millisecond, 0.5},
		{"ratio after a window", []call{{-1, 0, 0}, {100 * time.Millisecond, 300 * time.Millisecond, 300 * time.Millisecond},
			{time.Second, time.Second, time.Second}}, 0, 200 * time.Millisecond, 0.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &Pace{Modelled: prometheus.NewCounter(prometheus.CounterOpts{Name: "modelled"}),
				Lost: prometheus.NewCounter(prometheus.CounterOpts{Name: "lost"}), Ratio: prometheus.NewGauge(prometheus.GaugeOpts{Name: "ratio"})}
			for i, c := range tt.calls {
				var sched time.Time
				if c.sched >= 0 {
					sched = at(c.sched)
				}
				if got := p.Start(sched, at(c.now)); !got.Equal(at(c.want)) {
					t.Errorf("call %d: start at %v, want %v", i, got.Sub(t0), c.want)
				}
			}
			if tt.closeAt > 0 {
				p.Close(at(tt.closeAt))
			}
			if got := testutil.ToFloat64(p.Lost.(prometheus.Counter)); got != tt.wantLost.Seconds() {
				t.Errorf("lost %v s, want %v", got, tt.wantLost.Seconds())
			}
			if got := testutil.ToFloat64(p.Ratio.(prometheus.Gauge)); got != tt.wantRatio {
				t.Errorf("ratio %v, want %v", got, tt.wantRatio)
			}
		})
	}
}
