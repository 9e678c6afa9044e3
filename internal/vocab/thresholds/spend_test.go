package thresholds

import (
	"math"
	"testing"
)

func TestWithAlphaScaled(t *testing.T) {
	for _, tc := range []struct {
		name, yaml       string
		top, override    float64 // α after scaling by 0.5: top level, and the override's scope
		origTop, origOvr float64
	}{
		// No gate: at all: the shipped α (0.05), halved.
		{"default", "", 0.025, 0.025, 0.05, 0.05},
		// A file's α and an override's, each halved.
		{"file and override", "gate: {alpha: 0.1}\noverrides:\n  - match: {profile: speculative}\n    gate: {alpha: 0.02}\n", 0.05, 0.01, 0.1, 0.02},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(tc.yaml))
			if err != nil {
				t.Fatal(err)
			}
			half := s.WithAlphaScaled(0.5)
			for _, c := range []struct {
				set     *Set
				profile string
				want    float64
			}{{half, "basic", tc.top}, {half, "speculative", tc.override}, {s, "basic", tc.origTop}, {s, "speculative", tc.origOvr}} {
				if got := c.set.Gate(c.profile, "ttft-tpot", "ttft-p50-ns").Alpha; math.Abs(got-c.want) > 1e-12 {
					t.Errorf("α for %s: %g, want %g", c.profile, got, c.want)
				}
			}
		})
	}
}
