package cliarg

import (
	"slices"
	"testing"
)

func TestFlag(t *testing.T) {
	if got := SimSeed.Arg(); got != "--sim-seed" {
		t.Errorf("Arg = %q", got)
	}
	if got := SimSeed.With("7"); !slices.Equal(got, []string{"--sim-seed", "7"}) {
		t.Errorf("With = %q", got)
	}
	if got := QueryGPU.Eq("name"); got != "--query-gpu=name" {
		t.Errorf("Eq = %q", got)
	}
	for _, tc := range []struct {
		arg  string
		want bool
	}{
		{"--sim-seed", true},   // alone, the value next
		{"--sim-seed=3", true}, // one argument
		{"--sim-seeds", false}, // another flag that starts alike
		{"-sim-seed", false},   // one dash is not ours to read
		{"--sim-gpu=a", false}, // another flag
	} {
		if got := SimSeed.Is(tc.arg); got != tc.want {
			t.Errorf("Is(%q) = %v, want %v", tc.arg, got, tc.want)
		}
	}
	for _, tc := range []struct {
		args  []string
		want  string
		found bool
	}{
		{[]string{"--sim-gpu", "h100"}, "h100", true},                   // two arguments
		{[]string{"--sim-gpu=a100", "--sim-jitter", "0"}, "a100", true}, // one argument
		{[]string{"--sim-gpu=a100", "--sim-gpu", "h100"}, "h100", true}, // the last wins
		{[]string{"--sim-gpu"}, "", false},                              // no value after it
		{[]string{"--sim-seed", "1"}, "", false},                        // not given
	} {
		got, found := SimGPU.Value(tc.args)
		if got != tc.want || found != tc.found {
			t.Errorf("Value(%q) = %q, %v; want %q, %v", tc.args, got, found, tc.want, tc.found)
		}
	}
}
