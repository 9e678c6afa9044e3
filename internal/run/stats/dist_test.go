package stats

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
)

// TestPercentile checks the linear ("method 7") rule on inputs small enough
// to verify by hand: h = (n−1)·p/100, value = x[⌊h⌋] + (h−⌊h⌋)·(x[⌈h⌉]−x[⌊h⌋]).
// Each want is also what numpy.percentile returns.
func TestPercentile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		x    []float64
		p    float64
		want float64
	}{
		{[]float64{7}, 99, 7},                                     // one value: every percentile is it
		{[]float64{1, 2}, 50, 1.5},                                // h = 0.5
		{[]float64{1, 2, 3, 4}, 50, 2.5},                          // h = 1.5
		{[]float64{1, 2, 3, 4}, 90, 3.7},                          // h = 2.7: 3 + 0.7·1
		{[]float64{1, 2, 3, 4}, 25, 1.75},                         // h = 0.75
		{[]float64{1, 2, 3, 4, 5}, 90, 4.6},                       // h = 3.6
		{[]float64{10, 20, 30, 40, 50}, 99, 49.6},                 // h = 3.96: 40 + 0.96·10
		{[]float64{10, 20, 30, 40, 50}, 0, 10},                    // p = 0 is the minimum
		{[]float64{10, 20, 30, 40, 50}, 100, 50},                  // p = 100 is the maximum
		{[]float64{0, 100}, 99.9, 99.9},                           // h = 0.999
		{[]float64{1, 1, 1, 100}, 99, 97.03},                      // h = 2.97: 1 + 0.97·99
		{[]float64{1, 3, 3, 3, 9, 27}, 95, 22.5},                  // h = 4.75: 9 + 0.75·18
		{[]float64{-5, 0, 5}, 50, 0},                              // negatives are fine
		{[]float64{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}, 90, 18.2}, // h = 8.1
	}
	for _, tt := range tests {
		if got := Percentile(tt.x, tt.p); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("Percentile(%v, %v) = %v, want %v", tt.x, tt.p, got, tt.want)
		}
	}
	// Out-of-range input gives NaN, never a panic.
	for _, p := range []float64{-1, 100.5, math.NaN()} {
		if got := Percentile([]float64{1, 2}, p); !math.IsNaN(got) {
			t.Errorf("Percentile(p=%v) = %v, want NaN", p, got)
		}
	}
	if got := Percentile(nil, 50); !math.IsNaN(got) {
		t.Errorf("Percentile(nil) = %v, want NaN", got)
	}
}

func TestMomentsByHand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		x                 []float64
		mean, std, median float64
	}{
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 2, 4.5}, // the textbook population-σ example
		{[]float64{1}, 1, 0, 1},                        // one value: σ = 0
		{[]float64{1, 2, 3}, 2, math.Sqrt(2.0 / 3), 2}, // odd n: middle value
	}
	for _, tt := range tests {
		s := slices.Sorted(slices.Values(tt.x))
		if got := Mean(tt.x); math.Abs(got-tt.mean) > 1e-12 {
			t.Errorf("Mean(%v) = %v, want %v", tt.x, got, tt.mean)
		}
		if got := Std(tt.x); math.Abs(got-tt.std) > 1e-12 {
			t.Errorf("Std(%v) = %v, want %v", tt.x, got, tt.std)
		}
		if got := Median(s); math.Abs(got-tt.median) > 1e-12 {
			t.Errorf("Median(%v) = %v, want %v", tt.x, got, tt.median)
		}
	}
	for name, f := range map[string]func([]float64) float64{"Mean": Mean, "Std": Std, "Median": Median} {
		if got := f(nil); !math.IsNaN(got) {
			t.Errorf("%s(nil) = %v, want NaN", name, got)
		}
	}
}

func TestMinSamples(t *testing.T) {
	t.Parallel()
	for p, want := range map[float64]int{50: 2, 90: 10, 95: 20, 99: 100, 99.9: 1000} {
		if got := minSamples(p); got != want {
			t.Errorf("minSamples(%v) = %d, want %d", p, got, want)
		}
	}
}

// TestAgainstNumpy holds Percentile, Median, Mean and Std to what numpy
// computed for the seeded inputs in testdata/numpy.json (written by
// testdata/numpy_gen.py), bit for bit.
func TestAgainstNumpy(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/numpy.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Values            []string
			Mean, Std, Median string
			Percentiles       map[string]string
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	parse := func(s string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("bad float %q: %v", s, err)
		}
		return v
	}
	if len(ref.Cases) < 20 {
		t.Fatalf("only %d cases in testdata/numpy.json", len(ref.Cases))
	}
	for _, c := range ref.Cases {
		x := make([]float64, len(c.Values))
		for i, s := range c.Values {
			x[i] = parse(s)
		}
		sorted := slices.Sorted(slices.Values(x))
		check := func(what string, got float64, want string) {
			t.Helper()
			if w := parse(want); got != w {
				t.Errorf("n=%d %s = %v (%x), numpy %v (%s)", len(x), what, got, got, w, want)
			}
		}
		check("mean", Mean(x), c.Mean)
		check("std", Std(x), c.Std)
		check("median", Median(sorted), c.Median)
		for ps, want := range c.Percentiles {
			p := parse(ps)
			check("p"+ps, Percentile(sorted, p), want)
		}
	}
}

func TestNewDist(t *testing.T) {
	t.Parallel()
	d := NewDist([]float64{4, 1, 3, 2}, 2)
	if d.N != 4 || d.Sources != 2 || d.Min != 1 || d.Max != 4 || d.Mean != 2.5 || d.Median != 2.5 {
		t.Errorf("NewDist = %+v", d)
	}
	if got, ok := d.Pct(90); !ok || math.Abs(got-3.7) > 1e-12 {
		t.Errorf("Pct(90) = %v, %v, want 3.7", got, ok)
	}
	if _, ok := d.Pct(42); ok {
		t.Error("Pct(42) reported a percentile the Dist does not carry")
	}
	if _, ok := NewDist(nil, 0).Pct(50); ok {
		t.Error("an empty Dist reported a percentile")
	}
}
