package history

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/run/check"
)

func oneRun(tpot float64) map[string]map[string][]float64 {
	return map[string]map[string][]float64{
		"profile=basic/scenario=ttft-tpot/prompt=short/conc=1": {"tpot-p50-ns": {tpot, tpot * 1.01}, "tok/s": {50, 49}, "err-%": {0, 0}},
	}
}

func TestAddKeepsTheRun(t *testing.T) {
	s, err := Init(filepath.Join(t.TempDir(), "h"))
	require.NoError(t, err)
	date := time.Date(2026, 12, 3, 14, 1, 2, 0, time.UTC)
	bench := benchText(simConfig(), oneRun(2e7))
	checks := []check.Result{{Name: "requests", Status: check.Pass}, {Name: "kv_peak", Status: check.Fail, Detail: "95% > 90%"}, {Name: "drain", Status: check.Pass}}
	dir := resultsDir(t, bench, checks, date)
	r, err := s.Add(dir, AddOptions{Commit: "8bbd94d0123456789", Ref: "main", Notes: []string{"driver 550 → 560"}})
	require.NoError(t, err)

	assert.Equal(t, "20261203T140102Z-8bbd94d", r.ID, "the date comes from summary.json's first run")
	assert.Equal(t, "gpu=sim:rtx4090-seed,model=Qwen/Qwen3-0.6B,backend=sim,size=quick", r.Key, "gate.DefaultConfigKeys, in its order, without the image")
	assert.Equal(t, simConfig(), r.Config)
	assert.Equal(t, 1, r.Record.Benchmarks)
	assert.Equal(t, 8, r.Values, "ns/op, tpot, tok/s and err-% of two repetitions")
	assert.Equal(t, map[check.Status]int{check.Pass: 2, check.Fail: 1}, r.Checks.Counts)
	assert.Equal(t, []CheckOutcome{{Run: "profile=basic/scenario=ttft-tpot/prompt=short/conc=1", Name: "kv_peak", Status: check.Fail, Detail: "95% > 90%"}}, r.Checks.NotPassed)
	assert.Equal(t, "2 PASS, 1 FAIL", r.Checks.String())

	// The layout docs/history.md promises.
	stored, err := os.ReadFile(filepath.Join(s.Dir, RunsDir, r.ID, BenchFile))
	require.NoError(t, err)
	assert.Equal(t, bench, string(stored), "bench.txt is kept verbatim")
	var rec Record
	data, err := os.ReadFile(filepath.Join(s.Dir, RunsDir, r.ID, RecordFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rec))
	assert.Equal(t, r.Record, rec)
	_, err = os.Stat(filepath.Join(s.Dir, MarkerFile))
	require.NoError(t, err)

	// A second run without summary.json is dated now; the runs come back oldest first.
	now := date.Add(48 * time.Hour)
	r2, err := s.Add(resultsDir(t, benchText(simConfig(), oneRun(2.1e7)), nil, time.Time{}), AddOptions{Commit: "abc", Now: func() time.Time { return now }})
	require.NoError(t, err)
	assert.Equal(t, "20261205T140102Z-abc", r2.ID)
	assert.Nil(t, r2.Checks)
	assert.Equal(t, "not recorded", r2.Checks.String())
	runs, err := s.Runs()
	require.NoError(t, err)
	require.Len(t, runs, 2)
	assert.Equal(t, []string{r.ID, r2.ID}, []string{runs[0].ID, runs[1].ID})
	assert.Equal(t, []float64{2e7, 2e7 * 1.01}, runs[0].Benchmarks[0].Values["tpot-p50-ns"])
}

func TestAddBenchFileAndSameSecond(t *testing.T) {
	s, err := Init(filepath.Join(t.TempDir(), "h"))
	require.NoError(t, err)
	date := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	for i, tpot := range []float64{2e7, 2.2e7} {
		file := filepath.Join(t.TempDir(), "new.txt")
		require.NoError(t, os.WriteFile(file, []byte(benchText(simConfig(), oneRun(tpot))), 0o644))
		r, err := s.Add(file, AddOptions{Commit: "abc", Date: date})
		require.NoError(t, err)
		assert.Equal(t, []string{"20261203T000000Z-abc", "20261203T000000Z-abc-2"}[i], r.ID)
	}
}

func TestBadInputNamesTheProblem(t *testing.T) {
	good := resultsDir(t, benchText(simConfig(), oneRun(2e7)), nil, time.Time{})
	mixedBench := benchText(simConfig(), oneRun(2e7)) + "gpu: sim:h100\nBenchmarkPerf/profile=basic/scenario=startup-2 1 1000 ns/op 5 ready-ns\n"
	notStore := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(notStore, "README"), []byte("x"), 0o644))
	for _, tc := range []struct {
		name string
		do   func(s *Store) error
		want string
	}{
		// A run needs the commit it measured.
		{"no commit", func(s *Store) error { _, err := s.Add(good, AddOptions{}); return err }, "give Commit SHA"},
		// A path that does not exist.
		{"no such folder", func(s *Store) error {
			_, err := s.Add(filepath.Join(good, "nope"), AddOptions{Commit: "a"})
			return err
		}, "give a results folder"},
		// A results folder without the suite's output.
		{"no bench.txt", func(s *Store) error { _, err := s.Add(t.TempDir(), AddOptions{Commit: "a"}); return err }, "has no bench.txt"},
		// A file that is not go test -bench output.
		{"not a bench file", func(s *Store) error {
			return addText(t, s, "hello\nBenchmarkPerf/x-2 1 garbage ns/op\n")
		}, "malformed benchmark line"},
		// One run of two setups.
		{"mixed setups", func(s *Store) error { return addText(t, s, mixedBench) }, "mixes setups: gpu"},
		// The same results twice.
		{"added twice", func(s *Store) error {
			if _, err := s.Add(good, AddOptions{Commit: "a"}); err != nil {
				return err
			}
			_, err := s.Add(good, AddOptions{Commit: "a"})
			return err
		}, "already in the store as run"},
		// A baseline that cannot be read.
		{"missing baseline", func(s *Store) error {
			_, err := s.Add(good, AddOptions{Commit: "a", Baseline: filepath.Join(good, "none.txt")})
			return err
		}, "Baseline"},
		// A folder of other files is never made a store.
		{"init over other files", func(*Store) error { _, err := Init(notStore); return err }, "is not empty and is not a history store"},
		// Open wants the marker.
		{"open a non-store", func(*Store) error { _, err := Open(notStore); return err }, "is not a history store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Init(filepath.Join(t.TempDir(), "h"))
			require.NoError(t, err)
			err = tc.do(s)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrBadInput)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func addText(t *testing.T, s *Store, text string) error {
	file := filepath.Join(t.TempDir(), "bench.txt")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o644))
	_, err := s.Add(file, AddOptions{Commit: "a"})
	return err
}

func TestRunsRefusesAnEditedStore(t *testing.T) {
	s := syntheticStore(t, 2, 1, map[string]map[string]step{"profile=basic/scenario=startup": {"tok/s": {level: 50, noise: 0.01}}}, nil, nil)
	runs, err := s.Runs()
	require.NoError(t, err)
	// A run folder renamed by hand no longer matches its record.
	require.NoError(t, os.Rename(runs[0].Dir, filepath.Join(s.Dir, RunsDir, "renamed")))
	_, err = s.Runs()
	require.ErrorIs(t, err, ErrBadInput)
	assert.Contains(t, err.Error(), `is not its folder's name "renamed"`)
}
