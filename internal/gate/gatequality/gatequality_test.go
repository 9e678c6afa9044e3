package gatequality

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
)

func fixture(t *testing.T) *Source {
	t.Helper()
	in, err := input.ReadFile("testdata/source.txt")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSource(in)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// value is a result's value of unit as the file wrote it.
func value(t *testing.T, in *input.Input, i int, unit string) float64 {
	t.Helper()
	for _, v := range in.Results[i].Values {
		if u, x := input.AsWritten(v); u == unit {
			return x
		}
	}
	t.Fatalf("result %d has no %s", i, unit)
	return 0
}

func TestSourcePoints(t *testing.T) {
	s := fixture(t)
	if got := s.Profiles(); strings.Join(got, ",") != "basic,chat" {
		t.Errorf("profiles %v, want basic,chat (file order)", got)
	}
	if s.Points() != 3 {
		t.Errorf("points %d, want 3", s.Points())
	}
}

// TestSideChanges: a side is every point × runs, each run a recorded run
// of its point times one start factor per profile; a change scales the
// units it names and nothing else.
func TestSideChanges(t *testing.T) {
	s := fixture(t)
	for _, tc := range []struct {
		name       string
		change     Change
		ttft, toks float64 // factors expected on basic's points
		chatTTFT   float64
	}{
		{"unchanged", Change{}, 1, 1, 1},
		{"basic 10% slower", Change{Slowdown: map[string]float64{"basic": 1.10}}, 1.10, 1 / 1.10, 1},
		{"basic P99 TTFT +20%", Change{Scale: map[string]float64{"basic ttft-p99-ns": 1.20}}, 1.20, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := s.Side(rand.New(rand.NewPCG(7, 1)), 4, "base", Change{})
			side := s.Side(rand.New(rand.NewPCG(7, 1)), 4, "new", tc.change)
			if len(side.Results) != 4*3 {
				t.Fatalf("%d results, want 12 (3 points × 4 runs)", len(side.Results))
			}
			cands := map[string][][]float64{} // profile → per run, the start factors its value allows
			for i, r := range side.Results {
				profile := "chat"
				f := tc.chatTTFT
				if strings.Contains(string(r.Name), "profile=basic") {
					profile, f = "basic", tc.ttft
				}
				if got, want := value(t, side, i, "ttft-p99-ns"), f*value(t, base, i, "ttft-p99-ns"); math.Abs(got/want-1) > 1e-12 {
					t.Errorf("%s run %d: ttft-p99-ns %g, want %g", r.Name, i, got, want)
				}
				if profile == "basic" {
					if got, want := value(t, side, i, "tok/s"), tc.toks*value(t, base, i, "tok/s"); math.Abs(got/want-1) > 1e-12 {
						t.Errorf("%s run %d: tok/s %g, want %g", r.Name, i, got, want)
					}
				}
				if got, want := value(t, side, i, "prefix-hit-%"), value(t, base, i, "prefix-hit-%"); got != want {
					t.Errorf("%s: prefix-hit-%% %g changed to %g: a share is not a time", r.Name, want, got)
				}
				// The base side's run is a recorded run of its point times its profile's start factor.
				cands[profile] = append(cands[profile], factors(value(t, base, i, "ttft-p99-ns"), r.Name))
			}
			for profile, runs := range cands {
				if !commonFactor(runs) {
					t.Errorf("%s: no one start factor makes every run a recorded run of its point: %v", profile, runs)
				}
			}
		})
	}
}

// TestSideStarts: a side of several starts gives each profile's runs in
// blocks their own server-start line, and the runs of one start share a
// start factor; the gate counts the starts; the source is untouched.
func TestSideStarts(t *testing.T) {
	s := fixture(t)
	side := s.SideSpread(rand.New(rand.NewPCG(7, 1)), 4, "new", Change{}, Spread{Start: StartSpread, Starts: 2})
	ids := map[string][]string{} // profile → the id of each run, in order
	for _, r := range side.Results {
		profile := map[bool]string{true: "basic", false: "chat"}[strings.Contains(string(r.Name), "profile=basic")]
		ids[profile] = append(ids[profile], r.GetConfig(input.ServerStartKey))
	}
	// basic: 2 points × 4 runs, runs 0-1 on start 0 and 2-3 on start 1, point after point.
	want := []string{"new/basic/start0", "new/basic/start0", "new/basic/start1", "new/basic/start1"}
	if got := ids["basic"]; !slices.Equal(got[:4], want) || !slices.Equal(got[4:], want) {
		t.Errorf("basic's server-start lines %q, want %q for each point", got, want)
	}
	for i, r := range side.Results {
		for j := i + 1; j < len(side.Results); j++ {
			o := side.Results[j]
			if r.GetConfig(input.ServerStartKey) == o.GetConfig(input.ServerStartKey) && string(r.Name) == string(o.Name) {
				// Two runs of one point on one start: their factors (value over a recorded run) share a candidate.
				a, b := value(t, side, i, "ttft-p99-ns"), value(t, side, j, "ttft-p99-ns")
				if !commonFactor([][]float64{factors(a, r.Name), factors(b, o.Name)}) {
					t.Errorf("%s runs %d and %d: one start, no common start factor", r.Name, i, j)
				}
			}
		}
	}
	for _, r := range s.points[0].runs {
		if id := r.GetConfig(input.ServerStartKey); id != "" {
			t.Errorf("the source's run carries %q: a side changed it", id)
		}
	}
	base := s.SideSpread(rand.New(rand.NewPCG(7, 2)), 4, "base", Change{}, Spread{Start: StartSpread, Starts: 2})
	rep, err := gate.Compare(base, side, nil, gate.Options{ConfigKeys: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Profiles {
		if p.BaseStarts != 2 || p.NextStarts != 2 {
			t.Errorf("%s: the gate counted %d + %d starts, want 2 a side", p.Profile, p.BaseStarts, p.NextStarts)
		}
	}
	one := s.SideSpread(rand.New(rand.NewPCG(7, 1)), 4, "new", Change{}, Spread{Start: StartSpread, Starts: 1})
	if Digest(one) != Digest(s.SideSpread(rand.New(rand.NewPCG(7, 1)), 4, "new", Change{}, Spread{Start: StartSpread})) {
		t.Error("Starts 1 is not the one-start side")
	}
}

// factors are the start factors a ttft-p99-ns value of the fixture's
// point called name allows: its value over each recorded run of the point
// (testdata/source.txt).
func factors(v float64, name []byte) []float64 {
	recorded := map[string][]float64{"basic/1": {100, 110, 120}, "basic/2": {200, 210}, "chat/1": {300, 310}}
	n := string(name)
	key := map[bool]string{true: "basic", false: "chat"}[strings.Contains(n, "basic")] + "/" + n[strings.Index(n, "conc=")+5:strings.Index(n, "conc=")+6]
	var out []float64
	for _, rec := range recorded[key] {
		out = append(out, v/rec)
	}
	return out
}

// commonFactor: some factor within 5 start spreads of 1 is among every
// run's candidates.
func commonFactor(runs [][]float64) bool {
	for _, k := range runs[0] {
		if math.Abs(math.Log(k)) > 5*StartSpread {
			continue
		}
		all := true
		for _, ks := range runs[1:] {
			all = all && slices.ContainsFunc(ks, func(x float64) bool { return math.Abs(x/k-1) < 1e-12 })
		}
		if all {
			return true
		}
	}
	return false
}

func TestNewSourceRefuses(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no profile", "BenchmarkOther-2 1 5 x-ns\nBenchmarkOther-2 1 6 x-ns\n", "not a suite benchmark with a profile"},
		{"one run", "BenchmarkPerf/profile=basic/scenario=startup-2 1 5 ready-ns\n", "at least 2 of every point"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := input.Read(strings.NewReader(tc.text), "x.txt")
			if err != nil {
				t.Fatal(err)
			}
			_, err = NewSource(in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}

func TestDigestAndInterval(t *testing.T) {
	s := fixture(t)
	a, b := s.Side(rand.New(rand.NewPCG(1, 1)), 3, "a", Change{}), s.Side(rand.New(rand.NewPCG(1, 1)), 3, "b", Change{})
	if Digest(a) != Digest(b) {
		t.Error("one seed, two digests: a side must be a function of its seed")
	}
	if c := s.Side(rand.New(rand.NewPCG(2, 1)), 3, "c", Change{}); Digest(c) == Digest(a) {
		t.Error("two seeds, one digest")
	}
	rng := rand.New(rand.NewPCG(3, 1))
	for _, tc := range []struct {
		trues, n int
		lo, hi   float64
	}{{0, 50, 0, 0}, {50, 50, 1, 1}, {25, 50, 0.3, 0.7}} {
		xs := make([]bool, tc.n)
		for i := range tc.trues {
			xs[i] = true
		}
		lo, hi := Interval(rng, xs, 2000)
		if lo < tc.lo-1e-9 || hi > tc.hi+1e-9 || lo > hi || (tc.trues == 25 && (lo > 0.45 || hi < 0.55)) {
			t.Errorf("%d of %d: interval [%g, %g], want within [%g, %g] around the rate", tc.trues, tc.n, lo, hi, tc.lo, tc.hi)
		}
	}
}
