package profile

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds Parse arbitrary profile files, seeded with this
// package's testdata and testdata/fuzz/FuzzParse (an alias bomb, a cut
// file): it returns a profile or an error, never panics.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.yaml")
	for _, name := range seeds {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Parse("fuzz.yaml", b)
	})
}
