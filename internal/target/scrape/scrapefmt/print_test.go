package scrapefmt

import "testing"

func TestEnginesWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, "none labelled (no engine label on the series)"},
		{[]string{"0"}, "1 (engine label 0)"},
		{[]string{"0", "1"}, "2 (engine labels 0, 1)"},
	} {
		if got := enginesWords(tc.in); got != tc.want {
			t.Errorf("enginesWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
