package steadynoise

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
)

// TestFiguresSteadyNoise computes docs/load-shapes.md's table of the
// protocol "Does the steady window make the gate less noisy?" from the
// committed testdata files (TestRecord writes them) and its verdict.
func TestFiguresSteadyNoise(t *testing.T) {
	t.Parallel()
	var all []*Size
	for _, size := range sizes {
		whole, steady := filepath.Join("testdata", size+"-whole.txt"), filepath.Join("testdata", size+"-steady.txt")
		if _, err := os.Stat(whole); errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s is missing: record it (%s=DIR go test -count=1 -run '^TestRecord$' ./internal/results/steadynoise/, docs/load-shapes.md)", whole, EnvData)
		}
		s, err := ReadSize(size, whole, steady)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s)
	}
	docfigures.Sync(t, "docs/load-shapes.md", "steady-noise", "\n"+Table(all)+"\n")
}
