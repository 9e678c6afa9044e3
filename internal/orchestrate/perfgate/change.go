package perfgate

import (
	"context"
	"fmt"
	"os/exec"
	"path"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/cliarg"
)

// ForceLabel is the pull-request label that asks for a measurement
// whatever the change touches.
const ForceLabel = "perf-gate"

// Measured are the files that change the measured system: the profiles
// and workloads (scenarios/), the gate's thresholds, the pinned image
// (package server's DefaultImage, the workflow's default) and the suite
// itself. A pull request that touches none of them is not measured.
var Measured = []string{
	"scenarios/*", "thresholds.yaml", "perf_test.go",
	"internal/target/server/server.go", ".github/workflows/perf-gate.yml",
}

// Change is a pull request's change: its base (a git revision, "" when
// not a pull request) and labels.
type Change struct {
	Base   string
	Labels []string
}

// Skip reports whether the run can be skipped, and why: a pull request
// (Base set) without ForceLabel whose diff touches no Measured file. A
// diff that cannot be read never skips.
func (c Change) Skip(ctx context.Context, dir string) (bool, string) {
	if c.Base == "" || slices.Contains(c.Labels, ForceLabel) {
		return false, ""
	}
	cmd := exec.CommandContext(ctx, "git", "diff", cliarg.NameOnly.Arg(), c.Base+"...HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return false, fmt.Sprintf("could not list the files this pull request changes (git diff %s...HEAD: %v; fetch the base, e.g. actions/checkout with fetch-depth: 0): measuring it", c.Base, err)
	}
	files := strings.Fields(string(out))
	if touched := Touched(files); len(touched) > 0 {
		return false, ""
	}
	return true, fmt.Sprintf("this pull request changes %d files, none of the measured system (%s): not measured; label it %q to measure it anyway",
		len(files), strings.Join(Measured, ", "), ForceLabel)
}

// Touched returns the files that match Measured ("dir/*" matches
// anything below dir).
func Touched(files []string) []string {
	var out []string
	for _, f := range files {
		for _, m := range Measured {
			dir, isDir := strings.CutSuffix(m, "/*")
			if ok, _ := path.Match(m, f); ok || (isDir && strings.HasPrefix(f, dir+"/")) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}
