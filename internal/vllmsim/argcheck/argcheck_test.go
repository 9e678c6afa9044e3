package argcheck

import (
	"math"
	"testing"
	"time"
)

func TestRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want string // "" for nil
	}{
		// Inside a closed range.
		{"int in", IntRange(5, 1, 10), ""},
		// Below an unbounded range: the bound in argparse's words.
		{"int below", IntRange(-1, 0, math.MaxInt), "-1 is out of range: want an integer >= 0"},
		// Above a closed range.
		{"int above", IntRange(70000, 0, 65535), "70000 is out of range: want an integer from 0 to 65535"},
		// The open lower bound excludes it.
		{"float open", FloatRange(0, 0, 1, true), "0 is out of range: want a number > 0 and <= 1"},
		// NaN is in no range.
		{"float nan", FloatRange(math.NaN(), 0, 1, false), "NaN is out of range: want a number >= 0 and <= 1"},
		// No upper bound.
		{"float unbounded", FloatRange(-1, 0, math.Inf(1), false), "-1 is out of range: want a number >= 0"},
		// A probability.
		{"rate", Rate(1.5), "rate 1.5 is out of range: want a probability from 0 to 1, e.g. 0.05"},
		// NaN is no probability.
		{"rate nan", Rate(math.NaN()), "rate NaN is out of range: want a probability from 0 to 1, e.g. 0.05"},
		// Durations.
		{"negative duration", NonNegative(-time.Second), "negative duration: '-1s' (want 0 or more, e.g. 500ms)"},
		// Choices, case-sensitive as argparse.
		{"choice", Choice("BF16", []string{"auto", "bfloat16"}), "invalid choice: 'BF16' (choose from 'auto', 'bfloat16')"},
		{"int choice", IntChoice(12, []int{8, 16}), "invalid choice: '12' (choose from '8', '16')"},
		{"int choice ok", IntChoice(16, []int{8, 16}), ""},
	}
	for _, tt := range tests {
		got := ""
		if tt.err != nil {
			got = tt.err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
