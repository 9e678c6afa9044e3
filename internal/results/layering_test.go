package results_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReadersStandAlone holds the layering design.md promises: a results
// folder's types, and its readers (the report, the diagnosis, the
// history), never pull in the run pipeline or the simulator behind it.
// What runs and writes converts at the edge (package results/record).
func TestReadersStandAlone(t *testing.T) {
	// simPaceNames is the simulator's own leaf of series names (it imports
	// nothing): the readers may name the simulator's pace series without
	// pulling in its code.
	const simPaceNames = "github.com/vllmperf/vllmperf/internal/vllmsim/simpace"
	t.Parallel()
	const mod = "github.com/vllmperf/vllmperf/internal/"
	readers := []string{
		mod + "results",
		mod + "results/report",
		mod + "results/diagnose",
		mod + "results/history",
	}
	forbidden := []struct {
		path   string
		prefix bool // the path and everything under it
		why    string
	}{
		{mod + "run/pipeline", false, "the run pipeline (pipeline.Run, pipeline.Result)"},
		{mod + "target/server", false, "the server starter"},
		{mod + "run/check", false, "the checks of a live run (verdict holds their words)"},
		{mod + "orchestrate/capacity", false, "the capacity search (record converts its result)"},
		{mod + "vllmsim", true, "the simulator"},
	}
	cmd := exec.Command("go", append([]string{"list", "-f", `{{.ImportPath}}:{{join .Deps " "}}`}, readers...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("go list line %q: want path:deps", line)
		}
		seen++
		for _, dep := range strings.Fields(deps) {
			for _, f := range forbidden {
				if dep == simPaceNames {
					continue
				}
				if dep == f.path || (f.prefix && strings.HasPrefix(dep, f.path+"/")) {
					t.Errorf("%s depends on %s, %s: readers of a results folder take its records (package results), converted at the edge", pkg, dep, f.why)
				}
			}
		}
	}
	if seen != len(readers) {
		t.Fatalf("go list listed %d packages, want %d:\n%s", seen, len(readers), out)
	}
}
