package calibration

import (
	"slices"
	"testing"
)

// TestOutputLengths: the replayed lengths keep the published mean exactly,
// respect the cap, spread like a geometric distribution and are the same
// for the same seed.
func TestOutputLengths(t *testing.T) {
	tests := []struct {
		name          string
		w             SimWorkload
		n             int
		wantTotal     int
		minMax        int // the longest must be at least this (a tail), or exactly it when capped
		capped, fixed bool
	}{
		// Fixed lengths: every request gets OutputTokens.
		{"fixed", SimWorkload{OutputTokens: 128}, 10, 1280, 128, false, true},
		// ShareGPT totals (22061 over 100 requests): mean kept, a long tail.
		{"sharegpt", SimWorkload{OutputTokens: 221, OutputsVary: true, MeanOutputTokens: 220.61}, 100, 22061, 3 * 221, false, false},
		// EOS before a 128-token cap (mean 100.3): capped at 128, many at the cap.
		{"eos-capped", SimWorkload{OutputTokens: 100, OutputsVary: true, MeanOutputTokens: 100.3, OutputCap: 128}, 300, 30090, 128, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.w.OutputLengths(tt.n, 7)
			total := 0
			for _, v := range got {
				total += v
				if v < 1 || (tt.w.OutputCap > 0 && v > tt.w.OutputCap) {
					t.Fatalf("length %d outside [1, %d]", v, tt.w.OutputCap)
				}
			}
			if total != tt.wantTotal {
				t.Errorf("total %d, want %d", total, tt.wantTotal)
			}
			longest := slices.Max(got)
			switch {
			case tt.fixed && (longest != tt.minMax || slices.Min(got) != tt.minMax):
				t.Errorf("fixed lengths %v..%v, want all %d", slices.Min(got), longest, tt.minMax)
			case tt.capped && longest != tt.minMax:
				t.Errorf("longest %d, want the cap %d", longest, tt.minMax)
			case !tt.fixed && !tt.capped && longest < tt.minMax:
				t.Errorf("longest %d, want a tail of at least %d", longest, tt.minMax)
			}
			if again := tt.w.OutputLengths(tt.n, 7); !slices.Equal(got, again) {
				t.Error("same seed, different lengths")
			}
		})
	}
}
