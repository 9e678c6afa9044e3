package dataset

import "testing"

func TestFilterString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    Filter
		want string
	}{
		{ShareGPTFilter, "prompt 4 to 1024 words, output at least 4 tokens, prompt + output at most 2048"},
		{Filter{MaxOutput: 64}, "prompt any length, output at most 64 tokens"},
		{Filter{}, "prompt any length, output any length"},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.f, got, tc.want)
		}
	}
}
