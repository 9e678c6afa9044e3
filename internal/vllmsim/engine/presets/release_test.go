package presets

import (
	"strings"
	"testing"
)

// TestParseRelease: vLLM's release numbers, and the error that names the
// spelling wanted.
func TestParseRelease(t *testing.T) {
	tests := []struct {
		in   string
		want Release
		err  string
	}{
		{in: "0.11.0", want: Release{0, 11, 0}},
		{in: "0.9", want: Release{0, 9, 0}},
		{in: "0.10.1.1", want: Release{0, 10, 1}},
		{in: "1.2.3", want: Release{1, 2, 3}},
		{in: "v0.11.0", err: "'v0.11.0' is no vLLM release: write X.Y or X.Y.Z without a leading v, e.g. 0.11.0"},
		{in: "0.11.0rc1", err: "'0.11.0rc1' is no vLLM release"},
		{in: "latest", err: "'latest' is no vLLM release"},
		{in: "", err: "'' is no vLLM release"},
	}
	for _, tt := range tests {
		got, err := ParseRelease(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseRelease(%q): error %v, want one containing %q", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseRelease(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	if !(Release{0, 10, 1}).Before(Release{0, 11, 0}) || (Release{0, 11, 0}).Before(Release{0, 11, 0}) || (Release{0, 19, 0}).Before(Release{0, 11, 0}) {
		t.Error("Release.Before orders releases wrongly")
	}
}
