package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reportFolder copies the report package's results folder into a temporary
// one (the command writes into it).
func reportFolder(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "results")
	require.NoError(t, os.CopyFS(dst, os.DirFS(filepath.Join("..", "..", "internal", "results", "report", "testdata", "results"))))
	return dst
}

// TestReport re-renders a results folder from the folder alone: the table,
// the knees and the diagnosis on stdout, report.html and report.md in the
// folder.
func TestReport(t *testing.T) {
	dir := reportFolder(t)
	var out, errOut bytes.Buffer
	require.NoError(t, run(context.Background(), &out, &errOut, []string{"report", dir}))
	stdout := out.String()
	for _, want := range []string{
		"profile=basic/scenario=concurrency-sweep/conc=8", // the table
		"basic/concurrency-sweep: recommended concurrency limit",
		"diagnosis: ",
		"cold-start: Cold first request",
		"wrote " + filepath.Join(dir, "report.html"),
		"wrote " + filepath.Join(dir, "report.md"),
	} {
		assert.Contains(t, stdout, want)
	}
	for _, f := range []string{"report.html", "report.md"} {
		info, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.Positive(t, info.Size(), f)
	}
}

func TestReportErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		usage bool   // a usage error (exit 2)
		err   string // in the message
	}{
		// No folder given.
		{"no argument", []string{"report"}, true, "report takes one argument, the results folder (got 0)"},
		// A folder that is not a results folder says what it should be.
		{"not a results folder", []string{"report", "."}, true, "a results folder? make bench writes them under results/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), &out, &errOut, tc.args)
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.err)
			var ue usageError
			assert.Equal(t, tc.usage, errors.As(err, &ue))
		})
	}
}
