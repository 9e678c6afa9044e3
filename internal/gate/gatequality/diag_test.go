package gatequality

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
)

// envDiag=1 runs TestGateQualitySuiteStartSpread (by hand).
const envDiag = "VLLMPERF_SUITE_QUALITY_DIAG"

// TestGateQualitySuiteStartSpread is a diagnostic made AFTER the
// protocol's table was seen (docs/gate.md says so): the unchanged
// condition's false-fail rate as the start factor's spread varies, with
// and without a tie-breaking per-value factor, on seeds of its own
// (9,100,000 up). It is not a score and enforces nothing.
//
//	VLLMPERF_SUITE_QUALITY_DIAG=1 go test -count=1 -run TestGateQualitySuiteStartSpread -v ./internal/gate/gatequality
func TestGateQualitySuiteStartSpread(t *testing.T) {
	if os.Getenv(envDiag) != "1" {
		t.Skipf("a post-hoc diagnostic of some 60 seconds: set %s=1", envDiag)
	}
	src, set := loadSuite(t)
	const pairs = 20
	var b strings.Builder
	b.WriteString("| start spread | tie factor | A/A pairs | fails (exit 1) |\n|--:|--:|--:|--:|\n")
	for _, tie := range []float64{0, 0.01} {
		for _, start := range []float64{0, 0.005, 0.01, 0.02} {
			fails := 0
			for i := range pairs {
				side := func(s int) *input.Input {
					rng := rand.New(rand.NewPCG(uint64(9_100_000+2*i+s), seedStream))
					return src.SideSpread(rng, suiteRuns, fmt.Sprintf("diag%d-%d", i, s), Change{}, Spread{Start: start, Tie: tie})
				}
				rep, err := gate.Compare(side(0), side(1), set, gate.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Outcome() == gate.OutcomeFail {
					fails++
				}
			}
			fmt.Fprintf(&b, "| %.1f%% | %.0f%% | %d | %d |\n", 100*start, 100*tie, pairs, fails)
		}
	}
	t.Log("\n" + b.String())
}
