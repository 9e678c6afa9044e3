package calibration

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds Parse arbitrary bytes, seeded with every shipped and test
// file: it must return rows or an error, never panic.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"data/*.yaml", "testdata/*.yaml"} {
		files, err := filepath.Glob(glob)
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := Parse("fuzz.yaml", b)
		if err == nil && len(rows) == 0 {
			t.Fatal("no error and no rows")
		}
	})
}
