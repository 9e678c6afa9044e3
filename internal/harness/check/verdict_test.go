package check

import (
	"strings"
	"testing"
)

func TestParseShare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want float64
		bad  bool
	}{
		{"0", 0, false},       // the default: no failure allowed
		{"0.05", 0.05, false}, // a fraction
		{"5%", 0.05, false},   // a percentage
		{" 100 % ", 1, false}, // spaces around
		{"1.5", 0, true},      // above all of them
		{"-1%", 0, true},      // negative
		{"NaN", 0, true},      // not a share
		{"five", 0, true},     // not a number
	} {
		got, err := ParseShare("--max-failure-rate", tc.in)
		switch {
		case tc.bad && (err == nil || !strings.Contains(err.Error(), `--max-failure-rate "`+tc.in+`"`)):
			t.Errorf("%q: err = %v, want one naming the flag and the value", tc.in, err)
		case !tc.bad && (err != nil || got != tc.want):
			t.Errorf("%q = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
