package units

import (
	"strings"
	"testing"
)

func TestParseShare(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in       string
		bare     bool
		fraction float64
		points   float64
		err      string // a part of the error; "" for none
	}{
		{"5%", false, 0.05, 5, ""},
		{" 0.5 % ", false, 0.005, 0.5, ""},
		{"100%", false, 1, 100, ""},
		{"0.05", true, 0.05, 5, ""},        // a flag takes a bare fraction
		{"5%", true, 0.05, 5, ""},          // or a percentage
		{"0.05", false, 0, 0, "ambiguous"}, // a YAML file does not
		{"101%", false, 0, 0, "between 0% and 100%"},
		{"-1%", true, 0, 0, "a fraction from 0 to 1"},
		{"1.5", true, 0, 0, "a fraction from 0 to 1"},
		{"NaN%", false, 0, 0, "between 0% and 100%"},
		{"five", true, 0, 0, `"five"`},
	} {
		s, err := ParseShare(tt.in, tt.bare)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseShare(%q, %v) error %v, want one with %q", tt.in, tt.bare, err, tt.err)
			}
			continue
		}
		if err != nil || s.Fraction() != tt.fraction || s.Points() != tt.points {
			t.Errorf("ParseShare(%q, %v) = %+v (%v, %v points), %v; want %v, %v points", tt.in, tt.bare, s, s.Fraction(), s.Points(), err, tt.fraction, tt.points)
		}
	}
}
