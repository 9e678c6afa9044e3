package cliflags

import (
	"runtime/debug"
	"testing"
)

func TestVersionOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"release", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.4.0"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "4ee7abb0c0ffee"}, {Key: "vcs.time", Value: "2026-12-06T20:00:00Z"}, {Key: "vcs.modified", Value: "false"}}},
			"v1.4.0, commit 4ee7abb0c0ffee (2026-12-06T20:00:00Z), go1.26.0"},
		{"checkout with changes", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "4ee7abb"}, {Key: "vcs.modified", Value: "true"}}},
			"(devel), commit 4ee7abb+modified, go1.26.0"},
		{"no vcs", debug.BuildInfo{GoVersion: "go1.26.0"},
			"(devel), commit unknown (built without VCS information: go test, -buildvcs=false, or outside a git checkout), go1.26.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := versionOf(&tc.bi); got != tc.want {
				t.Errorf("versionOf = %q, want %q", got, tc.want)
			}
		})
	}
}
