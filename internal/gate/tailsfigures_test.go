package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate/gatetest"
	"github.com/vllmperf/vllmperf/internal/testphase"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// The seeds the tail figures are measured on: never used while the rule
// was written (its tests use seeds 1-5).
const (
	tailSeedsAA     = 1_000_000
	tailSeedsChange = 2_000_000
	tailPairsAA     = 400
	tailPairsChange = 100
)

// TestFiguresGateTails measures the gate on generated suite-shaped pairs
// (issueShape: 2 profiles × 6 points, 10 runs a side, P99 CV 6-8%, a run's
// points sharing a 1% start factor), writes docs/gate.md's table of them,
// and fails when unchanged pairs fail more often than α or a 20% tail
// regression on every point of a profile is caught less than 95% of the
// time. Some 10 s without the race detector (MEASURED in the Makefile).
func TestFiguresGateTails(t *testing.T) {
	testphase.Measured(t)
	if raceEnabled {
		t.Skip("a measurement of some 10 seconds, minutes under the race detector: make test runs it without -race (MEASURED)")
	}
	t.Parallel()
	alpha := thresholds.Default().Gate("", "", "").Alpha
	var b strings.Builder
	fmt.Fprintf(&b, "\nGenerated pairs of %d profiles × %d points, %d runs a side, P99 run-to-run CV %.0f–%.0f%%, the shipped thresholds.yaml; seeds from %d (unchanged) and %d (changed), none used while the rule was written (`go test -run TestFiguresGateTails ./internal/gate`):\n\n",
		len(issueShape.Profiles), len(issueShape.Concs), issueShape.Runs, 100*issueShape.P99CV[0], 100*issueShape.P99CV[1], tailSeedsAA, tailSeedsChange)
	b.WriteString("| true change | pairs | fails (exit 1) | fails naming only that profile and metric |\n|---|--:|--:|--:|\n")
	fails, _ := tailRates(t, issueShape, tailSeedsAA, tailPairsAA, nil, "")
	fmt.Fprintf(&b, "| unchanged | %d | %d (%.1f%%) | — |\n", tailPairsAA, fails, 100*float64(fails)/tailPairsAA)
	if float64(fails) > alpha*tailPairsAA {
		t.Errorf("unchanged pairs: %d of %d fail, more than α %g", fails, tailPairsAA, alpha)
	}
	for _, c := range []struct {
		unit   string
		factor float64
		target bool
	}{
		{units.TTFTP99, 1.2, true}, {units.TPOTP99, 1.2, true}, {units.ITLP99, 1.2, true},
		{units.TTFTP99, 1.1, false}, {units.ITLP99, 1.1, false},
	} {
		want := "chat " + c.unit
		fails, named := tailRates(t, issueShape, tailSeedsChange, tailPairsChange, gatetest.Changes{want: c.factor}, want)
		fmt.Fprintf(&b, "| %s %+.0f%% on every point of one profile | %d | %d%% | %d%% |\n", c.unit, 100*(c.factor-1), tailPairsChange, 100*fails/tailPairsChange, 100*named/tailPairsChange)
		if c.target && 100*fails < 95*tailPairsChange {
			t.Errorf("%s: caught %d of %d, want at least 95%%", want, fails, tailPairsChange)
		}
	}
	docfigures.Sync(t, "docs/gate.md", "gate-tails", b.String())
}
