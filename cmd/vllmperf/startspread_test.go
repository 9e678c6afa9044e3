package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStartSpread measures the start spread of the history package's
// committed simulator store (runs of one key, each on its own start) and
// refuses a single recording, naming what it needs.
func TestStartSpread(t *testing.T) {
	runs, err := filepath.Glob(filepath.Join("..", "..", "internal", "results", "history", "testdata", "sim", "runs", "*", "bench.txt"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(runs), 2)
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(context.Background(), &stdout, &stderr, append([]string{"start-spread"}, runs...)))
	assert.Contains(t, stdout.String(), "start spread: ")
	assert.Contains(t, stdout.String(), "per profile: basic ")

	err = run(context.Background(), &stdout, &stderr, []string{"start-spread", runs[0]})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at least two recordings")
}
