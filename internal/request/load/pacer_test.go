package load

import (
	"math"
	"testing"
	"time"
)

func TestNewPacerErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name             string
		rate, burstiness float64
	}{
		// Zero, negative and NaN rates.
		{"zero rate", 0, 1},
		{"negative rate", -1, 1},
		{"NaN rate", math.NaN(), 1},
		// Zero, negative and NaN burstiness.
		{"zero burstiness", 1, 0},
		{"negative burstiness", 1, -2},
		{"NaN burstiness", 1, math.NaN()},
	}
	for _, tt := range tests {
		if _, err := NewPacer(tt.rate, tt.burstiness, 1); err == nil {
			t.Errorf("%s: NewPacer(%v, %v) accepted", tt.name, tt.rate, tt.burstiness)
		}
	}
}

// TestGammaPacerMoments checks the gaps' mean (1/rate) and coefficient of
// variation (1/√b) on a fixed seed.
func TestGammaPacerMoments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rate, b float64
	}{
		{10, 1},    // Poisson: CV 1
		{10, 0.25}, // bursty: CV 2
		{50, 0.7},  // shape < 1 path with another rate
		{10, 4},    // smoother: CV 0.5
		{2, 100},   // near constant: CV 0.1
	}
	const n = 40000
	for _, tt := range tests {
		p, err := NewPacer(tt.rate, tt.b, 42)
		if err != nil {
			t.Fatal(err)
		}
		var sum, sum2 float64
		prev, _ := p.Arrival(0)
		if prev != 0 {
			t.Fatalf("Arrival(0) = %v, want 0", prev)
		}
		for k := 1; k <= n; k++ {
			at, _ := p.Arrival(k)
			g := (at - prev).Seconds()
			prev = at
			sum += g
			sum2 += g * g
		}
		mean := sum / n
		cv := math.Sqrt(sum2/n-mean*mean) / mean
		if want := 1 / tt.rate; math.Abs(mean-want)/want > 0.05 {
			t.Errorf("rate %v b %v: mean gap %v, want %v ±5%%", tt.rate, tt.b, mean, want)
		}
		if want := 1 / math.Sqrt(tt.b); math.Abs(cv-want)/want > 0.05 {
			t.Errorf("rate %v b %v: CV %v, want %v ±5%%", tt.rate, tt.b, cv, want)
		}
	}
}

func TestGammaPacerSpecialCases(t *testing.T) {
	t.Parallel()
	inf, _ := NewPacer(math.Inf(1), 1, 1)
	if at, stop := inf.Arrival(1000); at != 0 || stop {
		t.Errorf("rate inf: Arrival(1000) = %v, %v, want 0, false", at, stop)
	}
	constant, _ := NewPacer(4, math.Inf(1), 1)
	if at, _ := constant.Arrival(10); at != 2500*time.Millisecond {
		t.Errorf("constant 4/s: Arrival(10) = %v, want 2.5s", at)
	}
	if _, stop := constant.Arrival(-1); !stop {
		t.Error("Arrival(-1) did not stop")
	}
	// Pace is the wait until Arrival(sent), never negative.
	if wait, _ := constant.Pace(time.Second, 10); wait != 1500*time.Millisecond {
		t.Errorf("Pace(1s, 10) = %v, want 1.5s", wait)
	}
	if wait, _ := constant.Pace(time.Hour, 10); wait != 0 {
		t.Errorf("Pace(1h, 10) = %v, want 0 (already due)", wait)
	}
	// The same seed gives the same schedule, read in any order.
	a, _ := NewPacer(7, 0.5, 9)
	b, _ := NewPacer(7, 0.5, 9)
	late, _ := b.Arrival(500)
	for k := 0; k <= 500; k++ {
		x, _ := a.Arrival(k)
		y, _ := b.Arrival(k)
		if x != y {
			t.Fatalf("Arrival(%d) differs between pacers with the same seed: %v vs %v", k, x, y)
		}
	}
	if x, _ := a.Arrival(500); x != late {
		t.Error("Arrival(500) changed after later reads")
	}
}
