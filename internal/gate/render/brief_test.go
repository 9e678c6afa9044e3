package render

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate"
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
	got, err := gate.Compare(sim, sim, thresholds.Default(), gate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got.Thresholds = "thresholds.yaml"
	rep := Of(got)
	var b bytes.Buffer
	if err := rep.WriteBrief(&b); err != nil {
		t.Fatal(err)
	}
	docfigures.Sync(t, "docs/verdict.md", "gate-brief", "\n```\n$ vllmperf gate baselines/sim.txt baselines/sim.txt\n"+b.String()+"```\n")
}
