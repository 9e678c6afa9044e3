package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMerge joins package merge's two fixture folders (one profile each)
// and refuses to merge a folder with itself, naming the profile.
func TestMerge(t *testing.T) {
	td := filepath.Join("..", "..", "internal", "results", "merge", "testdata")
	out := filepath.Join(t.TempDir(), "merged")
	var stdout, stderr bytes.Buffer
	require.NoError(t, run(context.Background(), &stdout, &stderr, []string{"merge", "--out", out, filepath.Join(td, "basic"), filepath.Join(td, "low-latency")}))
	assert.Contains(t, stdout.String(), "merge: 4 runs of profiles [basic low-latency] into "+out)
	assert.FileExists(t, filepath.Join(out, "bench.txt"))

	err := run(context.Background(), &stdout, &stderr, []string{"merge", "--out", filepath.Join(t.TempDir(), "m"), filepath.Join(td, "basic"), filepath.Join(td, "basic")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "profile basic is in both")

	err = run(context.Background(), &stdout, &stderr, []string{"merge", filepath.Join(td, "basic")})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no output folder: give --out DIR")
}
