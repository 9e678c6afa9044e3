package results_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/run/sample"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// TestWriteAndRead writes records built by hand (package record builds
// them from a real run: its tests run one) and reads the folder back: the
// Writer numbers repetitions and stamps every line with its run.
func TestWriteAndRead(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r")
	w, err := results.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	name := "profile=basic/scenario=x/conc=2"
	rec := results.Record{
		Run: results.Run{Name: name, Profile: "basic", Scenario: "x", Point: "conc=2", Rep: 7, Concurrency: 2, Result: json.RawMessage(`{"completed":2}`),
			Metrics: map[string]float64{"req/s": 2}, Checks: []verdict.Check{{Name: "requests", Status: verdict.Pass, Detail: "2 of 2"}}},
		Samples: []sample.Sample{{Index: 0, Sent: t0, Done: t0.Add(time.Second)}, {Index: 1, Sent: t0, Done: t0.Add(2 * time.Second)}},
		Series:  []results.SeriesLine{{T: -0.5, Running: 1}, {T: 0.5, Running: 2}, {T: 1.5, Running: 2}},
	}
	w.SetConfig("basic", map[string]string{"backend": "sim"})
	w.Add(rec)
	w.Add(rec) // a second repetition
	startup := results.Record{Run: results.Run{Name: "profile=basic/scenario=startup", Profile: "basic"}}
	w.Add(startup) // no sampler: no series lines
	w.AddKnee(results.Knee{Profile: "basic", Scenario: "concurrency-sweep", Knee: 8, Rep: 3})
	w.AddKnee(results.Knee{Profile: "basic", Scenario: "concurrency-sweep", Knee: 16})
	w.AddCapacity(results.Capacity{Profile: "basic", Scenario: "slo-capacity", Found: true, Statement: "up to 10 req/s"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	f, err := results.ReadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := f.Summary
	if len(s.Runs) != 3 || s.Runs[0].Rep != 0 || s.Runs[1].Rep != 1 || s.Runs[2].Rep != 0 || s.Config["basic"]["backend"] != "sim" {
		t.Fatalf("runs %+v", s.Runs)
	}
	if got := s.Runs[1].Checks; len(got) != 1 || got[0].Status != verdict.Pass {
		t.Errorf("checks %+v", got)
	}
	for rep := range 2 {
		k := results.RunKey{Name: name, Rep: rep}
		if got := f.Samples(k); len(got) != 2 || got[1].Index != 1 {
			t.Errorf("rep %d samples %+v", rep, got)
		}
		if got := f.Series(k); len(got) != 3 || got[2].Run != name || got[2].Rep != rep || got[2].T != 1.5 {
			t.Errorf("rep %d series %+v", rep, got)
		}
	}
	if got := f.Series(results.RunKey{Name: startup.Run.Name}); len(got) != 0 {
		t.Errorf("a run without a sampler has series %+v", got)
	}
	if len(s.Knees) != 2 || s.Knees[0].Rep != 0 || s.Knees[1].Rep != 1 || s.Knees[1].Steps == nil {
		t.Errorf("knees %+v", s.Knees)
	}
	if len(s.Capacities) != 1 || s.Capacities[0].Rep != 0 || s.Capacities[0].Runs == nil || s.Capacities[0].Statement != "up to 10 req/s" {
		t.Errorf("capacities %+v", s.Capacities)
	}
	if lines := countLines(t, filepath.Join(dir, results.SamplesFile)); lines != 4 {
		t.Errorf("samples.jsonl has %d lines, want 4", lines)
	}
}

func TestFailReachesClose(t *testing.T) {
	t.Parallel()
	w, err := results.Create(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w.Fail(os.ErrInvalid)
	w.Fail(os.ErrClosed) // only the first is returned
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), os.ErrInvalid.Error()) {
		t.Errorf("Close after Fail: %v", err)
	}
}

func TestCreateRefusesUsedFolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, results.BenchFile), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := results.Create(dir) // bench.txt alone is fine: make bench tees it there first
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := results.Create(dir); err == nil || !strings.Contains(err.Error(), "already holds summary.json") {
		t.Errorf("second Create: %v", err)
	}
	if _, err := results.Read(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is") {
		t.Errorf("Read of an empty folder: %v", err)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("%s line %d is not JSON", path, n+1)
		}
		n++
	}
	return n
}
