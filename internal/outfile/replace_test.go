package outfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestReplace: a write puts the whole new content in place; a failed one
// leaves the old file and no temporary file.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "gate.json")
	if err := ReplaceBytes(path, 0o600, []byte("old\n")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk full")
	err := Replace(path, 0o644, func(w io.Writer) error {
		_, _ = io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want %v", err, boom)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old\n" {
		t.Errorf("after a failed write the file holds %q, want the old content", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries in the folder, want the file alone", len(entries))
	}
	if err := ReplaceBytes(path, 0o644, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if got, _ := os.ReadFile(path); string(got) != "new\n" || fi.Mode().Perm() != 0o600 {
		t.Errorf("file %q mode %v, want \"new\\n\" keeping mode 0600", got, fi.Mode().Perm())
	}
	if err := ReplaceBytes(filepath.Join(dir, "no", "such"), 0o644, nil); err == nil {
		t.Error("a missing folder gave no error")
	}
}
