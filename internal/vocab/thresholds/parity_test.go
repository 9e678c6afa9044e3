package thresholds

import (
	"strings"
	"testing"
)

// TestParity reads parity: over the shipped defaults, and refuses what is
// not a setting of it.
func TestParity(t *testing.T) {
	t.Parallel()
	if d := DefaultParity; d.Prompts != 8 || d.MaxTokens != 64 || d.EarlyTokens != 8 || d.MaxEarly != 0.25 || d.MinIdentical != 0 {
		t.Errorf("DefaultParity %+v: not the shipped thresholds.yaml's", d)
	}
	for _, tc := range []struct {
		name, yaml string
		want       Parity
		err        string
	}{
		{name: "absent", yaml: "max_error_rate: 0%\n", want: DefaultParity},
		{name: "some", yaml: "parity: {min_identical: 90%, max_early: 5%}\n",
			want: Parity{Prompts: 8, MaxTokens: 64, MinIdentical: 0.9, EarlyTokens: 8, MaxEarly: 0.05}},
		{name: "off", yaml: "parity: {prompts: 0}\n", want: Parity{MaxTokens: 64, EarlyTokens: 8, MaxEarly: 0.25}},
		{name: "negative", yaml: "parity: {prompts: -1}\n", err: `"-1": want a whole number, 0 or more`},
		{name: "unknown key", yaml: "parity: {max_late: 5%}\n", err: "max_late"},
		{name: "in an override", yaml: "overrides:\n  - match: {}\n    parity: {prompts: 2}\n", err: "parity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse("t.yaml", []byte(tc.yaml))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Parity(); got != tc.want {
				t.Errorf("Parity() = %+v, want %+v", got, tc.want)
			}
		})
	}
}
