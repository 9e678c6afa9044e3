package docfigures

import "testing"

func TestReplace(t *testing.T) {
	t.Parallel()
	begin, end := Markers("x")
	for _, tc := range []struct {
		name, doc, want string
		ok              bool
	}{
		// The text between the markers is replaced, the rest kept.
		{"in place", "a " + begin + "old" + end + " b", "a " + begin + "new" + end + " b", true},
		// No markers: an error, never a silent no-op.
		{"missing", "a b", "", false},
		// Two figures of one name cannot be told apart.
		{"twice", begin + end + begin + end, "", false},
		// An end before its begin.
		{"order", end + begin, "", false},
	} {
		got, err := Replace(tc.doc, "x", "new")
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%s: Replace = %q, %v; want %q, ok %v", tc.name, got, err, tc.want, tc.ok)
		}
	}
}
