package input

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRead feeds Read arbitrary bench files, seeded with the shipped
// baseline, the gate's fixtures and testdata/fuzz/FuzzRead (NaN, ±Inf, a
// line cut short): it returns results or an error, never panics, and
// never returns a value that is not a finite number.
func FuzzRead(f *testing.F) {
	seeds, _ := filepath.Glob("../testdata/bench/*.txt")
	seeds = append(seeds, filepath.Join("..", "..", "..", "baselines", "sim.txt"))
	for _, name := range seeds {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 16<<10)])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := Read(bytes.NewReader(b), "fuzz.txt")
		if err != nil {
			return
		}
		for _, r := range in.Results {
			for _, v := range r.Values {
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
					t.Fatalf("Read kept %v %s", v.Value, v.Unit)
				}
			}
		}
	})
}
