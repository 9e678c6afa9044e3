package suggest

import "testing"

func TestClosest(t *testing.T) {
	t.Parallel()
	flags := []string{"max-num-seqs", "max-num-batched-tokens", "max-model-len", "dtype", "enable-prefix-caching", "no-enable-prefix-caching"}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"one letter dropped", "max-num-seq", "max-num-seqs"},
		{"transposed letters", "dtpye", "dtype"},
		{"underscore instead of dash is far, prefix is not", "max-num-batched", "max-num-batched-tokens"},
		{"a negated form", "no-enable-prefix-cache", "no-enable-prefix-caching"},
		{"nothing close", "tensor-parallel-size", ""},
		{"short garbage never matches by prefix", "max", ""},
		{"exact name", "max-model-len", "max-model-len"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Closest(tc.in, flags); got != tc.want {
				t.Errorf("Closest(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},              // empty strings
		{"abc", "", 3},           // all deletions
		{"kitten", "sitting", 3}, // the textbook case
		{"flaw", "lawn", 2},      // delete and insert
		{"same", "same", 0},      // identical
	} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
