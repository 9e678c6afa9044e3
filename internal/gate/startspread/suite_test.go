package startspread

// The suite-shaped recordings of the estimate's test: a copy of the
// generator of package gate's tests (tails_test.go, start_test.go), which
// package gate's own tests cannot share without an import cycle.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// suiteShape is generated suite-shaped data: profiles × concurrency
// points, runs a side, the shipped thresholds. Each point's metric has a
// run-to-run noise (sd of the log): headline medians headCV, the P99s a
// CV drawn per point from p99CV; every run of a profile (one server start)
// also shares a factor of sd runCV, as go test -count runs the suite.
type suiteShape struct {
	profiles []string
	concs    []int
	runs     int
	headCV   float64
	p99CV    [2]float64
	runCV    float64
}

// shapeUnits are the units of a generated point, in file order.
var shapeUnits = []string{units.TTFTP50, units.TTFTP99, units.TPOTP50, units.TPOTP99, units.ITLP99, units.E2ELP99, units.TokPerSec}

// typical is a point's typical value of unit at concurrency c.
func typical(unit string, c int) float64 {
	ttft := 40e6 * (1 + float64(c)/16)
	tpot := 10e6 * (1 + float64(c)/32)
	switch unit {
	case units.TTFTP50:
		return ttft
	case units.TTFTP99:
		return 1.8 * ttft
	case units.TPOTP50:
		return tpot
	case units.TPOTP99:
		return 1.4 * tpot
	case units.ITLP99:
		return 1.6 * tpot
	case units.E2ELP99:
		return 1.8*ttft + 128*1.4*tpot
	default: // tok/s
		return float64(c) * 1e9 / tpot
	}
}

// changes multiply the new side's values: "profile unit" → factor, and
// "profile/conc unit" → factor for one point.
type changes map[string]float64

// pair generates a baseline and a new side from seed, the new one with
// the changes.
func (s suiteShape) pair(t testing.TB, seed uint64, ch changes) (*input.Input, *input.Input) {
	t.Helper()
	cvs := rand.New(rand.NewPCG(seed, 1)) // the points' noise levels, shared by both sides
	cv := map[string]float64{}
	for _, p := range s.profiles {
		for _, c := range s.concs {
			for _, u := range shapeUnits {
				k := fmt.Sprintf("%s/%d/%s", p, c, u)
				cv[k] = s.headCV
				if gate.IsTail(u) {
					cv[k] = s.p99CV[0] + (s.p99CV[1]-s.p99CV[0])*cvs.Float64()
				}
			}
		}
	}
	side := func(stream uint64, ch changes) *input.Input {
		rng := rand.New(rand.NewPCG(seed, stream))
		var b strings.Builder
		b.WriteString("backend: sim\ngpu: sim:shape\nmodel: m\nimage: in-process\n\n")
		for range s.runs {
			for _, p := range s.profiles {
				start := s.runCV * rng.NormFloat64()
				for _, c := range s.concs {
					fmt.Fprintf(&b, "BenchmarkPerf/profile=%s/scenario=concurrency-sweep/conc=%d-2 1", p, c)
					for _, u := range shapeUnits {
						shared := start
						if u == units.TokPerSec {
							shared = -start
						}
						v := typical(u, c) * math.Exp(shared+cv[fmt.Sprintf("%s/%d/%s", p, c, u)]*rng.NormFloat64())
						if f, ok := ch[p+" "+u]; ok {
							v *= f
						}
						if f, ok := ch[fmt.Sprintf("%s/%d %s", p, c, u)]; ok {
							v *= f
						}
						fmt.Fprintf(&b, " %g %s", v, u)
					}
					b.WriteString(" 0 err-%\n")
				}
			}
		}
		in, err := input.Read(strings.NewReader(b.String()), fmt.Sprintf("seed%d-%d.txt", seed, stream))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	return side(2, nil), side(3, ch)
}

// fiveProfiles is the suite's shape: 5 profiles × 6 points, 10 runs a
// side, headline noise 2.5%, P99 noise 6-8%.
var fiveProfiles = suiteShape{
	profiles: []string{"basic", "chat", "long", "memory", "spec"},
	concs:    []int{1, 2, 4, 8, 16, 32},
	runs:     10,
	headCV:   0.025,
	p99CV:    [2]float64{0.06, 0.08},
	runCV:    0.01,
}

// slowProfiles slows every unit of the profiles by their factors (a
// server start of the new side, or a true change): times for -ns units,
// divided for tok/s.
func slowProfiles(f map[string]float64) changes {
	ch := changes{}
	for p, k := range f {
		for _, u := range shapeUnits {
			ch[p+" "+u] = k
			if u == units.TokPerSec {
				ch[p+" "+u] = 1 / k
			}
		}
	}
	return ch
}
