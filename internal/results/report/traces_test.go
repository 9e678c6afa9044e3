package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestFindTraces: a folder's own traces/ and, for an upgrade gate's side
// (old/, new/), its traces beside it; other files are not traces.
func TestFindTraces(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, f := range []string{
		"new/traces/a.pt.trace.json.gz", "new/traces/notes.txt",
		"traces/new/b.pt.trace.json", "traces/old/c.pt.trace.json.gz", "traces/index.md",
	} {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := findTraces(filepath.Join(root, "new"))
	want := []TraceLink{{"a.pt.trace.json.gz", "traces/a.pt.trace.json.gz"}, {"b.pt.trace.json", "../traces/new/b.pt.trace.json"}}
	if !slices.Equal(got, want) {
		t.Errorf("findTraces = %+v, want %+v", got, want)
	}
	if got := findTraces(filepath.Join(root, "nowhere")); len(got) != 0 {
		t.Errorf("a folder without traces: %+v", got)
	}
}
