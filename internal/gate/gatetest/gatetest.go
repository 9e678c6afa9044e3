// Package gatetest generates suite-shaped benchmark files for the gate's
// tests (package gate's and its subpackages'): profiles × concurrency
// points, runs a side, each point's metrics with their own run-to-run
// noise and each profile's runs sharing one server start. It is imported
// by tests only, and imports the gate's input and the vocabulary, never
// package gate itself (whose own tests use it).
package gatetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// SuiteShape is generated suite-shaped data: profiles × concurrency
// points, runs a side, the shipped thresholds. Each point's metric has a
// run-to-run noise (sd of the log): headline medians HeadCV, the P99s a
// CV drawn per point from P99CV; every run of a profile (one server start)
// also shares a factor of sd RunCV, as go test -count runs the suite.
type SuiteShape struct {
	Profiles []string
	Concs    []int
	Runs     int
	HeadCV   float64
	P99CV    [2]float64
	RunCV    float64
}

// ShapeUnits are the units of a generated point, in file order.
var ShapeUnits = []string{units.TTFTP50, units.TTFTP99, units.TPOTP50, units.TPOTP99, units.ITLP99, units.E2ELP99, units.TokPerSec}

// Typical is a point's typical value of unit at concurrency c.
func Typical(unit string, c int) float64 {
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

// Changes multiply the new side's values: "profile unit" → factor, and
// "profile/conc unit" → factor for one point.
type Changes map[string]float64

// Pair generates a baseline and a new side from seed, the new one with
// the changes.
func (s SuiteShape) Pair(t testing.TB, seed uint64, ch Changes) (*input.Input, *input.Input) {
	t.Helper()
	cvs := rand.New(rand.NewPCG(seed, 1)) // the points' noise levels, shared by both sides
	cv := map[string]float64{}
	for _, p := range s.Profiles {
		for _, c := range s.Concs {
			for _, u := range ShapeUnits {
				k := fmt.Sprintf("%s/%d/%s", p, c, u)
				cv[k] = s.HeadCV
				if units.IsTail(u) {
					cv[k] = s.P99CV[0] + (s.P99CV[1]-s.P99CV[0])*cvs.Float64()
				}
			}
		}
	}
	side := func(stream uint64, ch Changes) *input.Input {
		rng := rand.New(rand.NewPCG(seed, stream))
		var b strings.Builder
		b.WriteString("backend: sim\ngpu: sim:shape\nmodel: m\nimage: in-process\n\n")
		for range s.Runs {
			for _, p := range s.Profiles {
				start := s.RunCV * rng.NormFloat64()
				for _, c := range s.Concs {
					fmt.Fprintf(&b, "BenchmarkPerf/profile=%s/scenario=concurrency-sweep/conc=%d-2 1", p, c)
					for _, u := range ShapeUnits {
						shared := start
						if u == units.TokPerSec {
							shared = -start
						}
						v := Typical(u, c) * math.Exp(shared+cv[fmt.Sprintf("%s/%d/%s", p, c, u)]*rng.NormFloat64())
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

// FiveProfiles is the suite's shape: 5 profiles × 6 points, 10 runs a
// side, headline noise 2.5%, P99 noise 6-8%.
var FiveProfiles = SuiteShape{
	Profiles: []string{"basic", "chat", "long", "memory", "spec"},
	Concs:    []int{1, 2, 4, 8, 16, 32},
	Runs:     10,
	HeadCV:   0.025,
	P99CV:    [2]float64{0.06, 0.08},
	RunCV:    0.01,
}

// SlowProfiles slows every unit of the profiles by their factors (a
// server start of the new side, or a true change): times for -ns units,
// divided for tok/s.
func SlowProfiles(f map[string]float64) Changes {
	ch := Changes{}
	for p, k := range f {
		for _, u := range ShapeUnits {
			ch[p+" "+u] = k
			if u == units.TokPerSec {
				ch[p+" "+u] = 1 / k
			}
		}
	}
	return ch
}
