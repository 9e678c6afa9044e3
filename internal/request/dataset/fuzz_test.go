package dataset

import (
	"io/fs"
	"testing"

	"github.com/vllmperf/vllmperf/fixtures"
)

// FuzzParse feeds Parse arbitrary data sets and traces, seeded with the
// built-in ones, this package's testdata and testdata/fuzz/FuzzParse (a
// timestamp that overflows, NaN, a line cut short): it returns entries or
// an error, never panics, and what it returns is usable: a completion
// length of at least 1, arrivals from 0 in order.
func FuzzParse(f *testing.F) {
	for _, dir := range []fs.FS{fixtures.DatasetFS()} {
		names, _ := fs.Glob(dir, "*")
		for _, name := range names {
			b, err := fs.ReadFile(dir, name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b[:min(len(b), 16<<10)])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, name := range []string{"fuzz.json", "fuzz.jsonl"} {
			file, err := Parse(name, b)
			if err != nil {
				continue
			}
			for i, e := range file.Entries {
				if e.OutputLen < 1 || e.At < 0 || (i > 0 && e.At < file.Entries[i-1].At) {
					t.Fatalf("%s: entry %d: output_len %d, at %v", name, i, e.OutputLen, e.At)
				}
			}
		}
	})
}
