package gatequality

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// envPointsDev=1 runs TestGateQualityPointsDev (by hand).
const envPointsDev = "VLLMPERF_POINTS_DEV"

// envPointsDevWide=1 runs TestGateQualityPointsDev on the sixth
// protocol's wider development seeds (14,000,000 up, 100 decisions a
// condition) in place of 11,000,000 up (20).
const envPointsDevWide = "VLLMPERF_POINTS_DEV_WIDE"

// TestGateQualityPointsDev is the development check on which the points
// test (points.go in package gate) was chosen: the fifth protocol's
// conditions on seeds of their own (11,000,000 up, used by no protocol),
// 20 decisions each, counting the fails. It is no score and enforces
// nothing.
//
//	VLLMPERF_POINTS_DEV=1 go test -count=1 -run TestGateQualityPointsDev -v ./internal/gate/gatequality
func TestGateQualityPointsDev(t *testing.T) {
	if os.Getenv(envPointsDev) != "1" {
		t.Skipf("a development check: set %s=1", envPointsDev)
	}
	src, set := loadSuite(t)
	pr := protocol{seedTop: 11_000_000, conditions: pointConditions, decisions: 20}
	if os.Getenv(envPointsDevWide) == "1" {
		pr = protocol{seedTop: 14_000_000, conditions: pointConditions, decisions: 100}
	}
	began := time.Now()
	ds := pr.decide(t, src, set, true)
	var b strings.Builder
	for c, cond := range pr.conditions {
		var n, fails, named int
		for _, d := range ds {
			if d.cond != c {
				continue
			}
			n++
			if d.outcome == verdict.OutcomeFail {
				fails++
			}
			if d.named {
				named++
			}
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", cond.label, n, fails, named)
	}
	t.Logf("%d decisions in %v\n%s", len(ds), time.Since(began), b.String())
}

// TestGateQualityPointsDevMisses logs, for the dev seeds' one-point
// conditions, each decision's changed point and the points test the
// report shows for its profile.
func TestGateQualityPointsDevMisses(t *testing.T) {
	if os.Getenv(envPointsDev) != "1" {
		t.Skipf("a development check: set %s=1", envPointsDev)
	}
	src, set := loadSuite(t)
	pr := protocol{seedTop: 11_000_000, conditions: pointConditions, decisions: 20}
	if os.Getenv(envPointsDevWide) == "1" {
		pr = protocol{seedTop: 14_000_000, conditions: pointConditions, decisions: 100}
	}
	for c := 1; c < len(pr.conditions); c++ {
		for i := range pr.perCondition() {
			base, nw, profile, _ := pr.pair(src, c, i)
			rep, err := gate.Compare(base, nw, set, gate.Options{})
			if err != nil {
				t.Fatal(err)
			}
			k := 37 * i % src.Points()
			for _, p := range rep.Points {
				if p.Profile == profile {
					t.Logf("c%d i%d %v %s: worst %s eff %+.1f%% own %+.1f%% min %g%% p %.2g adj %.2g reg %v %q %q", c, i, rep.Outcome(), src.PointName(k), p.Point, 100*p.Effect, 100*p.Own, 100*p.MinEffect, p.PWorse, p.PWorseHolm, p.Regression, p.Explained, p.Invalid)
				}
			}
		}
	}
}

// TestGateQualityPointsDevOthers is the points test's cost elsewhere on
// the development seeds: more unchanged pairs, a profile 10% slower and a
// tail 20% worse on one profile (the earlier protocols' conditions).
func TestGateQualityPointsDevOthers(t *testing.T) {
	if os.Getenv(envPointsDev) != "1" {
		t.Skipf("a development check: set %s=1", envPointsDev)
	}
	src, set := loadSuite(t)
	pr := protocol{seedTop: 12_000_000, conditions: []condition{conditions[0], conditions[2], conditions[3]}, decisions: 40}
	ds := pr.decide(t, src, set, true)
	for c, cond := range pr.conditions {
		var n, fails, named int
		for _, d := range ds {
			if d.cond == c {
				n++
				if d.outcome == verdict.OutcomeFail {
					fails++
				}
				if d.named {
					named++
				}
			}
		}
		t.Logf("| %s | %d | %d | %d |", cond.label, n, fails, named)
	}
}
