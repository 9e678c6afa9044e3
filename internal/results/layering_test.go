package results_test

import (
	"os/exec"
	"strings"
	"testing"
)

// mod is the module's internal folder, as go list spells it.
const mod = "github.com/vllmperf/vllmperf/internal/"

// forbidden is a package (or, with prefix, a package and everything under
// it) a set of packages must not depend on, and why.
type forbidden struct {
	path   string
	prefix bool
	why    string
}

// The heavy dependencies a reader of a run or of a results folder must not
// pull in.
var (
	noPipeline = forbidden{mod + "run/pipeline", false, "the run pipeline (pipeline.Run)"}
	noServer   = forbidden{mod + "target/server", false, "the server starter"}
	noSim      = forbidden{mod + "vllmsim", true, "the simulator"}
	// Docker's client and testcontainers come with the server starter's
	// container backend.
	noContainers = forbidden{"github.com/testcontainers", true, "testcontainers (the container backend)"}
	noDocker     = forbidden{"github.com/moby/moby", true, "Docker's client (the container backend)"}
)

// TestReadersStandAlone holds the layering design.md promises: a results
// folder's types, and its readers (the report, the diagnosis, the
// history), never pull in the run pipeline or the simulator behind it.
// What runs and writes converts at the edge (package orchestrate/record).
func TestReadersStandAlone(t *testing.T) {
	t.Parallel()
	assertStandAlone(t, []string{mod + "results", mod + "results/report", mod + "results/diagnose", mod + "results/history"},
		[]forbidden{noPipeline, noServer, noSim, noContainers, noDocker,
			{mod + "run/check", false, "the checks of a live run (verdict holds their words)"},
			{mod + "orchestrate/capacity", false, "the capacity search (record converts its result)"},
		}, "readers of a results folder take its records (package results), converted at the edge")
}

// TestRunReadersStandAlone: one run's result (package result) and the
// checks that read it (package check) stand apart from what produced it:
// neither the pipeline, nor the server starter, nor a container runtime.
func TestRunReadersStandAlone(t *testing.T) {
	t.Parallel()
	assertStandAlone(t, []string{mod + "run/result", mod + "run/check"},
		[]forbidden{noPipeline, noServer, noSim, noContainers, noDocker},
		"a run's readers take a result.Result, which the pipeline fills in")
}

// assertStandAlone fails for each dependency of pkgs that bans names.
func assertStandAlone(t *testing.T, pkgs []string, bans []forbidden, fix string) {
	t.Helper()
	// simPaceNames is the simulator's own leaf of series names (it imports
	// nothing): a reader may name the simulator's pace series without
	// pulling in its code.
	const simPaceNames = mod + "vllmsim/simpace"
	cmd := exec.Command("go", append([]string{"list", "-f", `{{.ImportPath}}:{{join .Deps " "}}`}, pkgs...)...)
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
			if dep == simPaceNames {
				continue
			}
			for _, f := range bans {
				if dep == f.path || (f.prefix && strings.HasPrefix(dep, f.path+"/")) {
					t.Errorf("%s depends on %s, %s: %s", pkg, dep, f.why, fix)
				}
			}
		}
	}
	if seen != len(pkgs) {
		t.Fatalf("go list listed %d packages, want %d:\n%s", seen, len(pkgs), out)
	}
}

// TestHistoryNoVLLMFormats: the history reads one key of vLLM's result
// JSON, its date, by the layout in vocab/vllmdate, without vllmfmt (the
// writer of vLLM's formats) or the /metrics names and parser behind it.
func TestHistoryNoVLLMFormats(t *testing.T) {
	t.Parallel()
	assertStandAlone(t, []string{mod + "results/history"},
		[]forbidden{{mod + "run/vllmfmt", false, "vLLM's formats (their writer)"}, {mod + "target/scrape", false, "the /metrics parser"}},
		"name the date layout by vllmdate.Layout")
}
