package thresholds

import (
	"strings"
	"testing"
)

// TestStartSpread: gate.start_spread is a share, 2% in the shipped file,
// overridable per profile and metric like the other gate settings, and
// strictly decoded.
func TestStartSpread(t *testing.T) {
	t.Parallel()
	if DefaultGate.StartSpread != 0.02 {
		t.Errorf("shipped start_spread %g, want 2%%", DefaultGate.StartSpread)
	}
	for _, tc := range []struct {
		name, yaml      string
		profile, metric string
		want            float64
		err             string
	}{
		{"top level", "gate:\n  start_spread: 3%\n", "basic", "tok/s", 0.03, ""},
		{"absent: the shipped file's", "gate:\n  alpha: 0.05\n", "basic", "tok/s", 0.02, ""},
		{"off", "gate:\n  start_spread: 0%\n", "basic", "tok/s", 0, ""},
		{"a profile's override", "overrides:\n  - match: {profile: speculative}\n    gate: {start_spread: 5%}\n", "speculative", "tok/s", 0.05, ""},
		{"not that profile", "overrides:\n  - match: {profile: speculative}\n    gate: {start_spread: 5%}\n", "basic", "tok/s", 0.02, ""},
		{"a metric's override", "overrides:\n  - match: {metric: itl-p99-ns}\n    gate: {start_spread: 4%}\n", "basic", "itl-p99-ns", 0.04, ""},
		{"a bare number", "gate:\n  start_spread: 0.02\n", "", "", 0, `"0.02": write a percentage with a % sign`},
		{"above 100%", "gate:\n  start_spread: 120%\n", "", "", 0, "120%"},
		{"misspelt", "gate:\n  start_sprad: 2%\n", "", "", 0, `unknown key "start_sprad" (did you mean "start_spread"?)`},
	} {
		s, err := Parse("t.yaml", []byte(tc.yaml))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := s.Gate(tc.profile, "", tc.metric).StartSpread; got != tc.want {
			t.Errorf("%s: start_spread %g, want %g", tc.name, got, tc.want)
		}
	}
}
