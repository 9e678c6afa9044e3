package cliflags

import (
	"fmt"
	"runtime/debug"
)

// Version is what `vllmperf --version` prints after "vllmperf version ":
// the module's version ("(devel)" for a build from a checkout), the
// commit it was built from (with "+modified" when the work tree had
// changes) and when, and the Go version, from the binary's build
// information.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (the binary carries no build information)"
	}
	return versionOf(bi)
}

// versionOf words bi as Version does.
func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	vcs := map[string]string{}
	for _, s := range bi.Settings {
		vcs[s.Key] = s.Value
	}
	commit := "commit unknown (built without VCS information: go test, -buildvcs=false, or outside a git checkout)"
	if rev := vcs["vcs.revision"]; rev != "" {
		if vcs["vcs.modified"] == "true" {
			rev += "+modified"
		}
		commit = "commit " + rev
		if t := vcs["vcs.time"]; t != "" {
			commit += " (" + t + ")"
		}
	}
	return fmt.Sprintf("%s, %s, %s", v, commit, bi.GoVersion)
}
