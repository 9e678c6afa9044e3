package input

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

func TestInputBenchmarks(t *testing.T) {
	in, err := Read(strings.NewReader(`Unit tok/s better=higher
gpu: sim:a
BenchmarkPerf/profile=basic/scenario=startup-2 1 100 ns/op 5e6 ready-ns
BenchmarkPerf/profile=basic/scenario=ttft-tpot/prompt=short/conc=1-2 1 200 ns/op 50 tok/s 2e7 tpot-p50-ns
BenchmarkPerf/profile=basic/scenario=startup-8 1 110 ns/op 6e6 ready-ns
gpu: sim:b
BenchmarkPerf/profile=basic/scenario=ttft-tpot/prompt=short/conc=1-2 1 210 ns/op 49 tok/s
`), "in.txt")
	require.NoError(t, err)
	bs, err := in.Benchmarks([]string{"gpu"})
	require.NoError(t, err)
	require.Len(t, bs, 2, "the -N suffix is ignored, as in Compare")
	assert.Equal(t, Benchmark{Name: "Perf/profile=basic/scenario=startup", Profile: "basic", Scenario: "startup",
		Units:  []string{"ns/op", "ready-ns"},
		Values: map[string][]float64{"ns/op": {100, 110}, "ready-ns": {5e6, 6e6}}, Config: map[string][]string{"gpu": {"sim:a"}}}, bs[0])
	assert.Equal(t, "ttft-tpot", bs[1].Scenario)
	assert.Equal(t, []string{"ns/op", "tok/s", "tpot-p50-ns"}, bs[1].Units, "units as written (ns, not benchfmt's seconds), first-seen order")
	assert.Equal(t, []float64{50, 49}, bs[1].Values["tok/s"])
	assert.Equal(t, []float64{2e7}, bs[1].Values["tpot-p50-ns"], "a unit one run lacks has fewer values")
	assert.Equal(t, []string{"sim:a", "sim:b"}, bs[1].Config["gpu"])
}

func TestInputDirection(t *testing.T) {
	in, err := Read(strings.NewReader("Unit tok/s better=higher\nUnit kv-peak-% better=none\nBenchmarkPerf/x-2 1 1 ns/op 1 tok/s\n"), "in.txt")
	require.NoError(t, err)
	set, err := thresholds.Parse("t.yaml", []byte("better:\n  ns/op: none\n  tok/s: lower\n  running-peak: higher\n"))
	require.NoError(t, err)
	for _, tc := range []struct {
		unit, want, from string
	}{
		{"tok/s", "higher", "Unit line"},         // the file's line wins over thresholds.yaml
		{"kv-peak-%", "none", "Unit line"},       // better=none is a direction too
		{"ns/op", "none", "thresholds"},          // thresholds.yaml over the name
		{"running-peak", "higher", "thresholds"}, // a unit the file does not mark
		{"ttft-p99-ns", "lower", "default"},      // the unit's name
		{"tok/chunk", "none", "default"},         // nothing decides: shown, not gated
	} {
		dir, from := in.Direction(set, "basic", "ttft-tpot", tc.unit)
		assert.Equal(t, tc.want, dir.String(), tc.unit)
		assert.Equal(t, tc.from, from, tc.unit)
	}
	dir, from := in.Direction(nil, "basic", "ttft-tpot", "ns/op")
	assert.Equal(t, units.Lower, dir, "nil: the built-in defaults")
	assert.Equal(t, "default", from)
}
