package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// historyStore is the history package's recorded store: 16 unchanged
// simulator runs, then 8 with --sim-slowdown 1.04.
const historyStore = "../../internal/results/history/testdata/sim"

// runHistoryCLI runs `vllmperf history args...` with the repository's
// thresholds.yaml and no job summary.
func runHistoryCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	full := append([]string{"history"}, args...)
	if len(args) > 0 && (args[0] == "check" || args[0] == "report") {
		full = append(full, "--thresholds", "../../thresholds.yaml")
		if args[0] == "check" {
			full = append(full, "--step-summary=")
		}
	}
	err := run(context.Background(), &out, &errOut, full)
	return exitCode(err, &errOut), out.String(), errOut.String()
}

func storeIDs(t *testing.T) []string {
	entries, err := os.ReadDir(filepath.Join(historyStore, "runs"))
	require.NoError(t, err)
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.Name())
	}
	return ids
}

// TestHistoryCheckExitCodes: the gate's statuses (docs/history.md).
func TestHistoryCheckExitCodes(t *testing.T) {
	t.Parallel()
	ids := storeIDs(t)
	for _, tc := range []struct {
		name    string
		args    []string
		want    int
		wantOut string
		wantErr string
	}{
		// The 16 unchanged runs: nothing to report.
		{"unchanged", []string{"--store", historyStore, "--until", ids[15]}, 0, "PASS: no change point in 47 series", ""},
		// The slowdown from run 17: a regression.
		{"slowdown", []string{"--store", historyStore, "--since", ids[8]}, 1, "REGRESSION", "vllmperf: FAIL: "},
		// Four runs cannot be tested.
		{"too few runs", []string{"--store", historyStore, "--last", "4"}, 3, "INCONCLUSIVE", "a series needs 6 runs"},
		// No store there.
		{"no store", []string{"--store", t.TempDir()}, 2, "", "is not a history store"},
		// A key line that no run has.
		{"unknown key line", []string{"--store", historyStore, "--key", "gpus=8"}, 2, "", `"gpus" is not a configuration line`},
		// A key that matches no run lists the store's keys.
		{"no matching run", []string{"--store", historyStore, "--key", "gpu=NVIDIA H100"}, 2, "", "the store has 24 runs of gpu=sim:rtx4090-seed"},
		// An option out of range.
		{"bad alpha", []string{"--store", historyStore, "--alpha", "2"}, 2, "", "--alpha 2"},
		// A format the check does not write.
		{"bad format", []string{"--store", historyStore, "--format", "yaml"}, 2, "", `--format "yaml"`},
		// A misspelt flag is a usage error, as everywhere.
		{"unknown flag", []string{"--store", historyStore, "--alpah", "0.1"}, 2, "", "unknown flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runHistoryCLI(t, append([]string{"check"}, tc.args...)...)
			assert.Equal(t, tc.want, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			assert.Contains(t, out, tc.wantOut)
			assert.Contains(t, errOut, tc.wantErr)
		})
	}
}

// TestHistoryAddShowReport: a run added from a results folder shows in the
// table and the CSV export, the same folder twice is refused, and the
// report writes history.html.
func TestHistoryAddShowReport(t *testing.T) {
	t.Parallel()
	ids := storeIDs(t)
	results := t.TempDir()
	bench, err := os.ReadFile(filepath.Join(historyStore, "runs", ids[0], "bench.txt"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(results, "bench.txt"), bench, 0o644))
	store := filepath.Join(t.TempDir(), "h")

	code, out, errOut := runHistoryCLI(t, "add", results, "--store", store, "--commit", "0123456789abcdef", "--date", "2026-12-03T10:00:00Z", "--event", "first run")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "added 20261203T100000Z-0123456 to "+store)
	assert.Contains(t, out, "4 benchmarks, 750 values, checks not recorded")

	code, _, errOut = runHistoryCLI(t, "add", results, "--store", store, "--commit", "0123456789abcdef")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "is already in the store as run 20261203T100000Z-0123456")

	code, _, errOut = runHistoryCLI(t, "add", results, "--store", store, "--commit", "c", "--date", "yesterday")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, `--date "yesterday": want RFC 3339`)

	code, out, errOut = runHistoryCLI(t, "show", "--store", store)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "20261203T100000Z-0123456")
	assert.Contains(t, out, "first run")

	code, out, errOut = runHistoryCLI(t, "show", "--store", historyStore, "--format", "csv", "--bench", "profile=basic/scenario=ttft-tpot/prompt=long")
	require.Equal(t, 0, code, errOut)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, "key", rows[0][0])
	assert.Len(t, rows, 1+24*18, "24 runs × the long prompt's 18 units (ns/op included)")
	assert.Equal(t, "Perf/profile=basic/scenario=ttft-tpot/prompt=long/conc=1", rows[1][8])

	dir := t.TempDir()
	code, out, errOut = runHistoryCLI(t, "report", "--store", historyStore, "--out", dir, "--max-benchmarks", "1")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "wrote "+filepath.Join(dir, "history.html"))
	page, err := os.ReadFile(filepath.Join(dir, "history.html"))
	require.NoError(t, err)
	assert.Equal(t, 4, strings.Count(string(page), `<figure class="chart"`), "one benchmark, four headline units")
}
