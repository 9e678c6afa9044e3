package presets

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
)

// DefaultRelease is the vLLM release the engine stands for when
// Config.Release is empty: the one whose API and flags it speaks.
const DefaultRelease = "0.11.0"

// Release is a vLLM release number, as far as the timing model tells
// releases apart.
type Release struct{ Major, Minor, Patch int }

// releasePattern is a release as vLLM numbers them: X.Y or X.Y.Z (Z may
// carry a fourth part, as 0.10.1.1 does, which is kept out of the order).
var releasePattern = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+)(?:\.\d+)?)?$`)

// ParseRelease reads a --sim-vllm-version value such as 0.11.0 or 0.9.
func ParseRelease(s string) (Release, error) {
	m := releasePattern.FindStringSubmatch(s)
	if m == nil {
		return Release{}, fmt.Errorf("'%s' is no vLLM release: write X.Y or X.Y.Z without a leading v, e.g. %s", s, DefaultRelease)
	}
	var r Release
	r.Major, _ = strconv.Atoi(m[1])
	r.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		r.Patch, _ = strconv.Atoi(m[3])
	}
	return r, nil
}

// Before reports whether r is an earlier release than o.
func (r Release) Before(o Release) bool {
	return cmp.Or(cmp.Compare(r.Major, o.Major), cmp.Compare(r.Minor, o.Minor), cmp.Compare(r.Patch, o.Patch)) < 0
}
