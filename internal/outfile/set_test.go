package outfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.jsonl")

	// Two flags naming one file are refused, naming both flags.
	if _, err := OpenSet("--json", a, "--samples", filepath.Join(dir, ".", "a.json")); err == nil || !strings.Contains(err.Error(), "--json and --samples both name") {
		t.Errorf("same path: err = %v", err)
	}
	// A path that cannot be written fails, and leaves nothing behind.
	if _, err := OpenSet("--json", a, "--samples", filepath.Join(dir, "missing", "b.jsonl")); err == nil || !strings.Contains(err.Error(), "--samples") {
		t.Errorf("bad path: err = %v", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a failed OpenSet left %d files behind", len(left))
	}
	// An empty path is no output; the others are written.
	s, err := OpenSet("--json", a, "--samples", "", "--other", b)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Discard()
	if got := strings.Join(s.Paths(), ","); got != a+","+b {
		t.Errorf("Paths = %s", got)
	}
	if s[1] != nil {
		t.Error("an empty path opened a file")
	}
	if err := s[0].Write(func(w io.Writer) error { _, err := io.WriteString(w, "{}"); return err }); err != nil {
		t.Fatal(err)
	}
	s.Discard()
	if got, err := os.ReadFile(a); err != nil || string(got) != "{}" {
		t.Errorf("written file: %q, %v", got, err)
	}
	if _, err := os.Stat(b); !os.IsNotExist(err) {
		t.Errorf("the unwritten file exists after Discard: %v", err)
	}
}
