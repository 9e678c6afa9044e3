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
	before, after := fixturePair(b, "vllm-sim-v1-before.prom", "vllm-sim-v1-after.prom")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Diff(before, after); err != nil {
			b.Fatal(err)
		}
	}
}
