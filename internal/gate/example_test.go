package gate_test

import (
	"fmt"
	"log"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// Compare a run whose TTFT rose under load with the baseline.
func ExampleCompare() {
	base, err := input.ReadFile("testdata/bench/base.txt")
	if err != nil {
		log.Fatal(err)
	}
	next, err := input.ReadFile("testdata/bench/regression.txt")
	if err != nil {
		log.Fatal(err)
	}
	set, err := thresholds.Load("testdata/thresholds.yaml")
	if err != nil {
		log.Fatal(err)
	}
	rep, err := gate.Compare(base, next, set, gate.Options{})
	if err != nil {
		log.Fatal(err) // bad input: exit 2
	}
	for _, row := range rep.Rows {
		if row.Verdict == gate.Regression {
			fmt.Printf("%s %s %+.1f%%\n", row.Name, row.Unit, row.DeltaPct)
		}
	}
	fmt.Println(rep.Headline(), "→ exit", rep.Outcome().ExitCode())
	// Output:
	// Perf/profile=basic/scenario=concurrency-sweep/conc=16 ttft-p50-ns +19.6%
	// Perf/profile=basic/scenario=concurrency-sweep/conc=16 ttft-p99-ns +28.2%
	// Perf/profile=basic/scenario=concurrency-sweep/conc=32 ttft-p50-ns +18.9%
	// Perf/profile=basic/scenario=concurrency-sweep/conc=32 ttft-p99-ns +27.6%
	// FAIL: 4 regressions, 32 unchanged → exit 1
}
