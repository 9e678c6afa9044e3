package gatetest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/input"
)

// RunnerLines is a bench file's lines of the runner control: runs runs
// of profile basic's points conc=1 and conc=32, each with a tpot-p50-ns
// of 1 and the point's runner-cpu-ns from points (a point absent from
// points is not written).
func RunnerLines(points map[string]float64, runs int) string {
	var b strings.Builder
	for range runs {
		for _, p := range []string{"conc=1", "conc=32"} {
			if v, ok := points[p]; ok {
				fmt.Fprintf(&b, "BenchmarkPerf/profile=basic/scenario=s/%s-2 1 1 tpot-p50-ns %g runner-cpu-ns\n", p, v)
			}
		}
	}
	return b.String()
}

// WithFailBlock reads the bench file at path with a `--- FAIL:` block of
// benchmark bench appended, its lines the checks (as go test prints a
// failed benchmark's log).
func WithFailBlock(t testing.TB, path, bench string, checks ...string) *input.Input {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.Write(data)
	b.WriteString("--- FAIL: Benchmark" + bench + "\n")
	for _, c := range checks {
		b.WriteString("    perf_test.go:212: " + c + "\n")
	}
	in, err := input.Read(strings.NewReader(b.String()), path)
	if err != nil {
		t.Fatal(err)
	}
	return in
}
