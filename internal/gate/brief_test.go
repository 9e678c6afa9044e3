package gate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// simBaseline is the shipped simulator baseline's path.
func simBaseline(t *testing.T) string {
	t.Helper()
	return filepath.Join(docfigures.ModuleRoot(t), "baselines", "sim.txt")
}

// TestFiguresBrief computes docs/verdict.md's example of the default
// report: the shipped baseline against itself, with the shipped
// thresholds (make figures rewrites it).
func TestFiguresBrief(t *testing.T) {
	t.Parallel()
	f, err := os.Open(simBaseline(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sim, err := input.Read(f, "baselines/sim.txt")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(sim, sim, thresholds.Default(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep.Thresholds = "thresholds.yaml"
	var b bytes.Buffer
	if err := rep.WriteBrief(&b); err != nil {
		t.Fatal(err)
	}
	docfigures.Sync(t, "docs/verdict.md", "gate-brief", "\n```\n$ vllmperf gate baselines/sim.txt baselines/sim.txt\n"+b.String()+"```\n")
}

// TestMissingBaselineHint: a results file that is not there names the
// files its folder holds (docs/verdict.md's first example once named a
// baselines/gpu.txt the repository does not ship).
func TestMissingBaselineHint(t *testing.T) {
	t.Parallel()
	_, err := input.ReadFile(filepath.Join(filepath.Dir(simBaseline(t)), "gpu.txt"))
	if err == nil || !strings.Contains(err.Error(), "holds sim.txt") || !strings.Contains(err.Error(), "make baseline-gpu") {
		t.Errorf("ReadFile(baselines/gpu.txt) = %v, want the folder's files named and how a GPU baseline is made", err)
	}
	if _, err := input.ReadFile(filepath.Join(t.TempDir(), "none.txt")); err == nil || strings.Contains(err.Error(), "holds") {
		t.Errorf("ReadFile in an empty folder = %v, want the error without a list", err)
	}
}
