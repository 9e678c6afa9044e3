package gate

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

var update = flag.Bool("update", false, "rewrite testdata/bench from the generator in fixtures_test.go")

func readBench(t *testing.T, name string) *input.Input {
	t.Helper()
	in, err := input.ReadFile(filepath.Join("testdata", "bench", name))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func loadThresholds(t *testing.T, name string) *thresholds.Set {
	t.Helper()
	set, err := thresholds.Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func hasVerdict(rep *Report, unit string, v Verdict) bool {
	for _, row := range rep.Rows {
		if row.Unit == unit && row.Verdict == v {
			return true
		}
	}
	return false
}
