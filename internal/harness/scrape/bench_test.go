package scrape

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// BenchmarkParse measures parsing one recorded vLLM exposition, what a
// Sampler does every interval.
func BenchmarkParse(b *testing.B) {
	body, err := os.ReadFile(fixture("vllm-sim-v1-after.prom"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(body), "bench", time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiff measures subtracting two recorded snapshots.
func BenchmarkDiff(b *testing.B) {
	before, err := ParseFile(fixture("vllm-sim-v1-before.prom"))
	if err != nil {
		b.Fatal(err)
	}
	after, err := ParseFile(fixture("vllm-sim-v1-after.prom"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Diff(before, after); err != nil {
			b.Fatal(err)
		}
	}
}
