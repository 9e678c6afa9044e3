package scrape

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzParse feeds Parse arbitrary /metrics pages, seeded with the
// recorded and crafted expositions (fixtures/metrics) and
// testdata/fuzz/FuzzParse (a histogram with NaN and +Inf counts, a page
// cut short): it returns a snapshot or an error, never panics.
func FuzzParse(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("..", "..", "..", "fixtures", "metrics", "*.prom"))
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 16<<10)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		snap, err := Parse(bytes.NewReader(b), "fuzz.prom", time.Unix(0, 0))
		if err == nil && snap == nil {
			t.Fatal("no snapshot and no error")
		}
	})
}
