package suite

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/request/load"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
)

// TestRunFolderLifecycle: no --results is no folder; a folder that holds
// results is refused; one a run never recorded into is removed again.
func TestRunFolderLifecycle(t *testing.T) {
	t.Parallel()
	if f, err := CreateRunFolder(""); f != nil || err != nil {
		t.Fatalf(`CreateRunFolder("") = %v, %v; want nil, nil`, f, err)
	}
	var none *RunFolder
	none.Discard()
	if err := none.Record(t.Context(), nil, profile.Profile{}, nil); err != nil {
		t.Errorf("a nil folder records nothing, got %v", err)
	}

	dir := filepath.Join(t.TempDir(), "run")
	f, err := CreateRunFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CreateRunFolder(dir); err == nil || !strings.Contains(err.Error(), "Results: ") {
		t.Errorf("a second folder in %s: %v, want it refused naming Results", dir, err)
	}
	f.Discard()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a folder never recorded into is left behind: %v", err)
	}

	kept := t.TempDir()
	if err := os.WriteFile(filepath.Join(kept, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = CreateRunFolder(kept)
	if err != nil {
		t.Fatal(err)
	}
	f.Discard()
	if _, err := os.Stat(filepath.Join(kept, "notes.txt")); err != nil {
		t.Errorf("Discard removed a file it did not make: %v", err)
	}
	if _, err := os.Stat(filepath.Join(kept, results.SamplesFile)); !os.IsNotExist(err) {
		t.Errorf("Discard left %s: %v", results.SamplesFile, err)
	}
}

func TestPointName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  load.Config
		want string
	}{
		{load.Config{Concurrency: 8}, "conc=8"},
		{load.Config{Rate: 4}, "rate=4"},
		{load.Config{Rate: 2.5, MaxConcurrency: 16}, "rate=2.5/cap=16"},
		{load.Config{}, "dataset"},
	} {
		if got := pointName(scenario.Point{Load: tc.cfg}); got != tc.want {
			t.Errorf("pointName(%+v) = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}
