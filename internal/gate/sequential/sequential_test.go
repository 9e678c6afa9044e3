package sequential

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

func TestSpending(t *testing.T) {
	const alpha = 0.05
	for _, s := range []Spending{OBrienFleming, Pocock} {
		if got := s.Spent(1, alpha); math.Abs(got-alpha) > 1e-9 {
			t.Errorf("%s: %g spent at t=1, want α %g", s.Name, got, alpha)
		}
		prev := 0.0
		for _, x := range []float64{0.1, 0.3, 0.5, 0.7, 0.9, 1} {
			if got := s.Spent(x, alpha); got <= prev {
				t.Errorf("%s: %g at t=%g, not above %g before", s.Name, got, x, prev)
			}
			prev = s.Spent(x, alpha)
		}
	}
	// The textbook values (Jennison & Turnbull, Lan-DeMets): at t = 0.5
	// O'Brien-Fleming has spent 0.0056 of 0.05, Pocock 0.0310.
	if got := OBrienFleming.Spent(0.5, alpha); math.Abs(got-0.0056) > 0.0002 {
		t.Errorf("O'Brien-Fleming at 0.5: %.4f, want 0.0056", got)
	}
	if got := Pocock.Spent(0.5, alpha); math.Abs(got-0.0310) > 0.0002 {
		t.Errorf("Pocock at 0.5: %.4f, want 0.0310", got)
	}
}

func TestSharesSumToOne(t *testing.T) {
	for _, s := range []Spending{OBrienFleming, Pocock} {
		d := Design{Min: 6, Cap: 14, Spending: s}
		sum, prev := 0.0, 0
		for _, n := range []int{6, 9, 13} {
			sum += d.Share(prev, n)
			prev = n
		}
		sum += 1 - d.Share(0, prev) // the cap's look spends what is left
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("%s: shares sum to %g, want 1", s.Name, sum)
		}
		if d.Share(0, 14) < 0.999 {
			t.Errorf("%s: one look at the cap spends %g, want all of α", s.Name, d.Share(0, 14))
		}
	}
}

func TestNext(t *testing.T) {
	for _, tc := range []struct{ need, cur, cap, want int }{
		{6, 3, 20, 6},    // the estimate, when above the minimum growth
		{7, 6, 20, 9},    // at least half as many again
		{2, 2, 20, 4},    // and at least 2 more
		{45, 10, 20, 20}, // never past the cap
		{-1, 6, 20, 20},  // beyond estimate: straight to the cap
	} {
		if got := (Design{Cap: tc.cap}).Next(tc.cur, tc.need); got != tc.want {
			t.Errorf("Next(%d, %d) cap %d = %d, want %d", tc.cur, tc.need, tc.cap, got, tc.want)
		}
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		d    Design
		want string
	}{
		{Design{Min: 0, Cap: 4, Spending: Pocock}, "first look at 0 runs"},
		{Design{Min: 6, Cap: 4, Spending: Pocock}, "cap 4 is below the first look's 6 runs"},
		{Design{Min: 6, Cap: 10}, "no spending function"},
	} {
		err := tc.d.Check()
		if !errors.Is(err, ErrDesign) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.d, err, tc.want)
		}
		if _, err := Run(tc.d, nil, nil, nil); !errors.Is(err, ErrDesign) {
			t.Errorf("Run(%+v): %v, want ErrDesign", tc.d, err)
		}
	}
}

// fakeSides are two benchmarks of one profile with noisy runs: point "a"
// slowed by slowA, point "b" by slowB and noiseB times noisier than a's
// 1%, drawn from rng.
type fakeSides struct {
	rng          *rand.Rand
	slowA, slowB float64
	noiseB       float64
	runs         map[string]int
	base         map[string][]float64
	next         map[string][]float64
	extends      []string
}

const benchPrefix = "Perf/profile=basic/scenario=ttft-tpot/"

func newFake(seed uint64, slowA, slowB, noiseB float64) *fakeSides {
	f := &fakeSides{rng: rand.New(rand.NewPCG(seed, 1)), slowA: slowA, slowB: slowB, noiseB: noiseB,
		runs: map[string]int{}, base: map[string][]float64{}, next: map[string][]float64{}}
	for _, p := range []string{"a", "b"} {
		for range 10 {
			f.base[p] = append(f.base[p], 1e8*(1+0.01*f.rng.NormFloat64()))
		}
	}
	return f
}

func (f *fakeSides) Extend(runs int, only []string) error {
	f.extends = append(f.extends, fmt.Sprint(runs, only))
	for _, p := range []string{"a", "b"} {
		name := benchPrefix + "prompt=" + p + "/conc=1"
		if only != nil && !strings.Contains(strings.Join(only, " "), name) {
			continue
		}
		slow, noise := f.slowA, 0.01
		if p == "b" {
			slow, noise = f.slowB, 0.01*f.noiseB
		}
		for len(f.next[p]) < runs {
			f.next[p] = append(f.next[p], 1e8*slow*(1+noise*f.rng.NormFloat64()))
		}
	}
	return nil
}

func (f *fakeSides) Compare(set *thresholds.Set) (*gate.Report, error) {
	text := func(side map[string][]float64) string {
		var b strings.Builder
		b.WriteString("Unit ttft-p50-ns better=lower\n")
		for _, p := range []string{"a", "b"} {
			for _, v := range side[p] {
				fmt.Fprintf(&b, "BenchmarkPerf/profile=basic/scenario=ttft-tpot/prompt=%s/conc=1-2 1 %.0f ns/op %.0f ttft-p50-ns\n", p, v, v)
			}
		}
		return b.String()
	}
	base, err := input.Read(strings.NewReader(text(f.base)), "base")
	if err != nil {
		return nil, err
	}
	next, err := input.Read(strings.NewReader(text(f.next)), "new")
	if err != nil {
		return nil, err
	}
	return gate.Compare(base, next, set, gate.Options{})
}

func TestRun(t *testing.T) {
	d := Design{Min: 6, Cap: 12, Spending: Pocock}
	for _, tc := range []struct {
		name                 string
		slowA, slowB, noiseB float64
		want                 gate.Decision
		maxLooks             int
		wantExtends          string
	}{
		// +20% on both points: a regression at the first look.
		{"clear slowdown", 1.2, 1.2, 1, gate.Different, 1, "[6 []]"},
		// Unchanged and steady: every row NO CHANGE at the first look.
		{"unchanged", 1, 1, 1, gate.Same, 1, "[6 []]"},
		// Unchanged, b's runs 8× noisier: a is decided at 6, only b runs
		// on while its intervals cannot rule the minimum effect out.
		{"one noisy point", 1, 1, 8, gate.Same, 4, "[6 [] 9 [" + benchPrefix + "prompt=b/conc=1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(1, tc.slowA, tc.slowB, tc.noiseB)
			res, err := Run(d, nil, f, []string{benchPrefix + "prompt=a/conc=1", benchPrefix + "prompt=b/conc=1"})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s after looks at %v", res.Decision(), f.extends)
			if got := fmt.Sprint(f.extends); !strings.HasPrefix(got, tc.wantExtends) {
				t.Errorf("extended %s, want it to start %s", got, tc.wantExtends)
			}
			if res.Decision() != tc.want || len(res.Looks) > tc.maxLooks {
				t.Errorf("%s after %d looks (%v), want %s within %d", res.Decision(), len(res.Looks), f.extends, tc.want, tc.maxLooks)
			}
			if res.Looks[0].Runs != 6 || res.Looks[0].Share <= 0 || res.Looks[0].Share >= 1 {
				t.Errorf("first look %+v: want 6 runs at a share of α", res.Looks[0])
			}
			for _, lk := range res.Looks[1:] {
				if len(lk.Undecided) > 0 && lk.Runs <= 6 {
					t.Errorf("a later look at %d runs", lk.Runs)
				}
			}
		})
	}
}

// invalidSides is a count whose every look is INVALID (a check says a
// run was no sound measurement) with a row still undecided.
type invalidSides struct{ extends []int }

func (s *invalidSides) Extend(runs int, _ []string) error {
	s.extends = append(s.extends, runs)
	return nil
}

func (s *invalidSides) Compare(*thresholds.Set) (*gate.Report, error) {
	return &gate.Report{
		Rows:   []gate.Row{{Name: "Perf/profile=basic/scenario=ttft-tpot/prompt=a/conc=1", Verdict: gate.Inconclusive}},
		Checks: []gate.Check{{Status: gate.CheckInvalid}},
	}, nil
}

// TestRunStopsAtInvalid: an INVALID look ends the count, though a row is
// undecided: more runs cannot make an unsound measurement sound.
func TestRunStopsAtInvalid(t *testing.T) {
	s := &invalidSides{}
	res, err := Run(Design{Min: 6, Cap: 12, Spending: Pocock}, nil, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Looks) != 1 || len(s.extends) != 1 || res.Report.Outcome() != gate.OutcomeInvalid {
		t.Errorf("looks %d, extends %v, outcome %s: want one look, INVALID", len(res.Looks), s.extends, res.Report.Outcome())
	}
}
