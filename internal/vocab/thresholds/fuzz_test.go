package thresholds

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds Parse arbitrary thresholds files, seeded with the
// shipped thresholds.yaml, this package's testdata and
// testdata/fuzz/FuzzParse (an alias bomb, a cut file, NaN limits): it
// returns a set or an error, never panics.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	seeds = append(seeds, filepath.Join("..", "..", "..", "thresholds.yaml"))
	for _, name := range seeds {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse("fuzz.yaml", b)
		if err == nil && s == nil {
			t.Fatal("no set and no error")
		}
	})
}
