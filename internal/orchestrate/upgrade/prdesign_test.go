package upgrade

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/vllmperf/vllmperf/internal/docfigures"
	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/gatequality"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// The PR gate's power is measured on the design perf-gate runs
// (docs/gpu-runners.md, "The PR gate"): each side a generated run of the
// candidate's profiles (gatequality's generator, from the copy of
// baselines/sim.txt the gate-quality protocols use), every profile's runs
// on one server start a side (or starts of them, as VLLMPERF_STARTS runs
// them) drawn with the configured 2% start spread, gated by gate.Compare
// with gate.Options{} (start-aware: the suite-wide and points tests
// included), as perfgate's gate step calls it.
const (
	prDesignSource = "internal/gate/gatequality/testdata/sim-48c0c24.txt"
	// prDesignSeed: side s of decision i of condition c (0 unchanged, 1
	// +5% on every point) of a candidate's draw k is PCG(prDesignSeed +
	// 100000k + 1000c + 2i + s, 0x9a7e): seeds no protocol uses.
	prDesignSeed = 13_000_000
	// prDesignAA and prDesignSlow are the decisions a candidate of each
	// condition: more unchanged ones, whose rate is read against 2%.
	prDesignAA, prDesignSlow = 80, 40
)

// prDesign is a candidate's measured power on the perf-gate design:
// fails of each condition and the tests the gate judged.
type prDesign struct {
	aaFails, slowFails, tests int
}

// prDesignPower gates prDesignAA unchanged pairs and prDesignSlow pairs
// at +5% on every point for the profiles at count runs a point, starts a
// side (draw k of the table).
func prDesignPower(t *testing.T, set *thresholds.Set, profiles []string, count, starts, k int) prDesign {
	t.Helper()
	src := prDesignSourceFor(t, profiles)
	type job struct{ c, i int }
	jobs := make(chan job)
	var mu sync.Mutex
	d := prDesign{}
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				seed := uint64(prDesignSeed + 100_000*k + 1000*j.c + 2*j.i)
				side := func(s uint64, ch gatequality.Change) *input.Input {
					rng := rand.New(rand.NewPCG(seed+s, 0x9a7e))
					return src.SideSpread(rng, count, fmt.Sprintf("k%d-c%d-i%d-s%d", k, j.c, j.i, s), ch, gatequality.Spread{Start: gatequality.StartSpread, Starts: starts})
				}
				ch := gatequality.Change{}
				if j.c == 1 {
					ch = src.SlowAll(1.05)
				}
				rep, err := gate.Compare(side(0, gatequality.Change{}), side(1, ch), set, gate.Options{})
				if err != nil {
					t.Error(err)
					continue
				}
				mu.Lock()
				fail := rep.Outcome() == verdict.OutcomeFail
				if j.c == 0 && fail {
					d.aaFails++
				}
				if j.c == 1 && fail {
					d.slowFails++
				}
				d.tests = max(d.tests, rep.Comparisons)
				mu.Unlock()
			}
		}()
	}
	for c, n := range []int{prDesignAA, prDesignSlow} {
		for i := range n {
			jobs <- job{c, i}
		}
	}
	close(jobs)
	wg.Wait()
	return d
}

// prDesignSourceFor is the generator's source restricted to profiles.
func prDesignSourceFor(t *testing.T, profiles []string) *gatequality.Source {
	t.Helper()
	in, err := input.ReadFile(filepath.Join(docfigures.ModuleRoot(t), prDesignSource))
	if err != nil {
		t.Fatal(err)
	}
	only := &input.Input{Name: in.Name, Units: in.Units}
	for _, r := range in.Results {
		if slices.Contains(profiles, profileOf(r)) {
			only.Results = append(only.Results, r)
		}
	}
	src, err := gatequality.NewSource(only)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// cpWords is "k of n (r%, exact 95% interval lo–hi%)".
func cpWords(k, n int) string {
	lo, hi := gatequality.ClopperPearson(k, n, 0.95)
	return fmt.Sprintf("%d of %d (%.0f%%, %.0f–%.0f%%)", k, n, pct(k, n), 100*lo, 100*hi)
}
