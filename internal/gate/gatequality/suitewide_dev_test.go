package gatequality

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// envSuiteWideDev=1 runs TestGateQualitySuiteWideDev (by hand).
const envSuiteWideDev = "VLLMPERF_SUITE_WIDE_DEV"

// TestGateQualitySuiteWideDev is the check on which the suite-wide test's
// leave-one-out guard was chosen (docs/gate.md, "Rule choices and earlier
// tables" has its counts under the second protocol's rule, a first
// variant and the chosen rule): the second protocol's generator and
// first three conditions on seeds of its own (7,000,000 up, used by no
// protocol), 50 decisions each, counting the fails, the fails naming the
// changed profile alone and the fails naming every profile (the
// suite-wide test). It is no score and enforces nothing.
//
//	VLLMPERF_SUITE_WIDE_DEV=1 go test -count=1 -run TestGateQualitySuiteWideDev -v ./internal/gate/gatequality
func TestGateQualitySuiteWideDev(t *testing.T) {
	if os.Getenv(envSuiteWideDev) != "1" {
		t.Skipf("a development check of some 30 seconds: set %s=1", envSuiteWideDev)
	}
	src, set := loadSuite(t)
	pr := protocol{seedTop: 7_000_000, conditions: conditions[:3]}
	ds := pr.decide(t, src, set, true)
	var b strings.Builder
	b.WriteString("| condition | decisions | fails (exit 1) | fails naming the changed profile alone | fails naming every profile |\n|---|--:|--:|--:|--:|\n")
	for c, cond := range pr.conditions {
		var n, fails, alone, every int
		for _, d := range ds {
			if d.cond != c {
				continue
			}
			n++
			if d.outcome != verdict.OutcomeFail {
				continue
			}
			fails++
			if d.named {
				alone++
			}
			base, nw, _, _ := pr.pair(src, d.cond, d.i)
			rep, err := gate.Compare(base, nw, set, gate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(rep.RegressedProfiles(), gate.SuiteProfile) {
				every++
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", cond.label, n, fails, alone, every)
	}
	t.Log("\n" + b.String())
}
