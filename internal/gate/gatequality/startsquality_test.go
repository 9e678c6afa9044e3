package gatequality

import (
	"testing"

	"github.com/vllmperf/vllmperf/internal/testphase"
)

// startsProtocol is docs/gate.md's fourth protocol, "Gate quality with
// five server starts a side": the rules of 40917f4 (the start allowance
// by each side's count of starts) on the third protocol's conditions,
// each side 5 server starts per profile with 2 runs on each, new seeds
// (8,000,000 up, bootstrap 8,999,999).
var startsProtocol = protocol{
	seedTop: 8_000_000, bootSeed: 8_999_999, conditions: startProtocol.conditions, starts: 5,
	digests: "testdata/starts-digests.txt", openMisses: "testdata/starts-open-misses.txt",
	figure: "gate-quality-starts", test: "TestFiguresGateQualityStarts",
}

// TestFiguresGateQualityStarts is the fourth protocol's check: it
// regenerates its 600 suite runs (each 5 starts a profile) from
// protocolSource and the seeds and checks them against the recorded
// digests. Its table, scored with the rules of 40917f4, is frozen history
// in docs/gate.md: the points test changed the rules after it.
//
//	VLLMPERF_RECORD_SUITE_QUALITY=1 go test -run TestFiguresGateQualityStarts ./internal/gate/gatequality  # the recording (digests only; once)
func TestFiguresGateQualityStarts(t *testing.T) {
	testphase.Measured(t)
	startsProtocol.run(t, false)
}
