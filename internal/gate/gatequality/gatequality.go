// Package gatequality generates suite-shaped sides for measuring the
// regression gate's quality as the suite runs (docs/gate.md, "Gate quality
// as the suite runs"): each side is a whole run of the suite, every point
// of every profile, drawn from a recorded whole-suite run (a Source, such
// as baselines/sim.txt). A generated run of a point is one of that point's
// recorded runs, drawn with replacement, times its profile's server-start
// factor for the side (one start per profile per side, as go test -count
// runs the suite) and times the side's true change.
package gatequality

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/aclements/go-moremath/mathx"
	"golang.org/x/perf/benchfmt"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// StartSpread is the sd of the log server-start factor: the between-start
// spread measured on the simulator (docs/gate.md's protocol: 2%).
const StartSpread = 0.02

// Source is a recorded whole-suite run: its points, in file order, each
// with its recorded runs.
type Source struct {
	in       *input.Input
	points   []point
	profiles []string // in file order
}

type point struct {
	profile string
	runs    []*benchfmt.Result
}

// NewSource groups in's results by benchmark. Every benchmark needs a
// profile (the suite's names) and at least two runs.
func NewSource(in *input.Input) (*Source, error) {
	s := &Source{in: in}
	at := map[string]int{}
	for _, r := range in.Results {
		name := string(r.Name)
		i, ok := at[name]
		if !ok {
			n, err := benchname.Parse(strings.TrimPrefix(trimProcs(name), benchname.Bench+"/"))
			if err != nil || n.Profile == "" {
				return nil, fmt.Errorf("%s: %s is not a suite benchmark with a profile (docs/bench-format.md): record the source with make baseline", in.Name, name)
			}
			i = len(s.points)
			at[name] = i
			s.points = append(s.points, point{profile: n.Profile})
			if !slices.Contains(s.profiles, n.Profile) {
				s.profiles = append(s.profiles, n.Profile)
			}
		}
		s.points[i].runs = append(s.points[i].runs, r)
	}
	for _, p := range s.points {
		if len(p.runs) < 2 {
			return nil, fmt.Errorf("%s: %s has %d run, a source needs at least 2 of every point (go test -count)", in.Name, p.runs[0].Name, len(p.runs))
		}
	}
	return s, nil
}

// Spread is a side's noise beyond the recorded runs: Start, the sd of the
// log start factor each profile draws once per server start; Tie, when
// above 0, the sd of a log factor drawn for every value (it breaks the
// ties that drawing from few recorded runs makes between sides: a
// diagnostic, not the protocol's design); Starts, when above 1, the
// server starts of a side: each profile draws that many start factors
// and run r of every point (of runs) is on start ⌊r·Starts/runs⌋, its
// result carrying that start's server-start line, as Starts processes of
// the suite concatenated write them.
type Spread struct {
	Start, Tie float64
	Starts     int
}

// trimProcs drops go test's -GOMAXPROCS suffix.
func trimProcs(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 && strings.Trim(name[i+1:], "0123456789") == "" && i+1 < len(name) {
		return name[:i]
	}
	return name
}

// Profiles are the source's profiles in file order.
func (s *Source) Profiles() []string { return slices.Clone(s.profiles) }

// Points is the number of benchmarks; Runs the runs of each a side has.
func (s *Source) Points() int { return len(s.points) }

// Change is a side's true change: every unit of every profile in
// Slowdown's keys is slowed by its factor (timing units, -ns, multiplied;
// throughput units divided), Scale's "profile unit" keys multiply one
// unit of every point of a profile, and Point's keys (a point's name,
// PointName) make every headline metric of one point worse by their
// factor (a lower-is-better one multiplied, a higher-is-better one
// divided).
type Change struct {
	Slowdown map[string]float64 // profile → factor (1.10: 10% slower)
	Scale    map[string]float64 // "profile unit" → factor
	Point    map[string]float64 // point name → factor (1.10: 10% worse)
}

// PointName is the name of the source's i-th point (file order), as
// Change.Point's keys spell it.
func (s *Source) PointName(i int) string { return string(s.points[i].runs[0].Name) }

// PointProfile is the profile of the source's i-th point.
func (s *Source) PointProfile(i int) string { return s.points[i].profile }

// worse is how making a point's headline metrics worse by f scales unit:
// f for a lower-is-better headline unit, 1/f for a higher-is-better one,
// 1 for the rest.
func worse(unit string, f float64) float64 {
	if !units.Headline(unit) {
		return 1
	}
	switch units.DefaultDirection(unit) {
	case units.Lower:
		return f
	case units.Higher:
		return 1 / f
	}
	return 1
}

// SlowAll is every profile of s slowed by f.
func (s *Source) SlowAll(f float64) Change {
	c := Change{Slowdown: map[string]float64{}}
	for _, p := range s.profiles {
		c.Slowdown[p] = f
	}
	return c
}

// throughput are the units a slower server lowers (the rest it leaves,
// except the -ns units, which it raises).
var throughput = []string{units.TokPerSec, units.ReqPerSec, units.Goodput, units.CapacityRate}

// timing is how a slowdown by f scales unit: f for a time, 1/f for a
// throughput, 1 for the rest (shares, counts, concurrencies).
func timing(unit string, f float64) float64 {
	switch {
	case units.KindOf(unit) == units.KindNanoseconds && unit != units.NsPerOp: // a -ns unit
		return f
	case slices.Contains(throughput, unit):
		return 1 / f
	}
	return 1
}

// Side generates one whole-suite run of runs repetitions of every point
// from rng, with change applied: each profile draws its server-start
// factor exp(StartSpread·z), then each run of each point is a recorded
// run of that point drawn uniformly (all its units together) times the
// start factor and the change.
func (s *Source) Side(rng *rand.Rand, runs int, name string, change Change) *input.Input {
	return s.SideSpread(rng, runs, name, change, Spread{Start: StartSpread})
}

// SideSpread is Side with another spread (Side's is the protocol's,
// Spread{Start: StartSpread}): the start factor's sd, and a per-value
// factor that breaks ties.
func (s *Source) SideSpread(rng *rand.Rand, runs int, name string, change Change, sp Spread) *input.Input {
	out := &input.Input{Name: name, Units: s.in.Units}
	starts := max(1, sp.Starts)
	start := map[string][]float64{}
	for _, p := range s.profiles {
		for range starts {
			start[p] = append(start[p], math.Exp(sp.Start*rng.NormFloat64()))
		}
	}
	for _, pt := range s.points {
		pointF, pointChanged := change.Point[string(pt.runs[0].Name)]
		for run := range runs {
			r := pt.runs[rng.IntN(len(pt.runs))].Clone()
			on := run * starts / runs
			if starts > 1 {
				setStart(r, fmt.Sprintf("%s/%s/start%d", name, pt.profile, on))
			}
			for i, v := range r.Values {
				unit, _ := input.AsWritten(v)
				f := timing(unit, start[pt.profile][on])
				if sp.Tie > 0 {
					f *= math.Exp(sp.Tie * rng.NormFloat64())
				}
				if d, ok := change.Slowdown[pt.profile]; ok {
					f *= timing(unit, d)
				}
				if k, ok := change.Scale[pt.profile+" "+unit]; ok {
					f *= k
				}
				if pointChanged {
					f *= worse(unit, pointF)
				}
				r.Values[i].Value *= f
				r.Values[i].OrigValue *= f
			}
			out.Results = append(out.Results, r)
		}
	}
	return out
}

// Digest is the SHA-256 of a generated side's results (names and value
// bits, in order; and the server-start line where a side has several
// starts): the record that the side was generated as it was.
func Digest(in *input.Input) string {
	h := sha256.New()
	var b [8]byte
	for _, r := range in.Results {
		h.Write(r.Name)
		if id := r.GetConfig(input.ServerStartKey); id != "" {
			h.Write([]byte(input.ServerStartKey + ": " + id))
		}
		for _, v := range r.Values {
			h.Write([]byte(v.Unit + v.OrigUnit))
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v.Value))
			h.Write(b[:])
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v.OrigValue))
			h.Write(b[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Interval is the percentile bootstrap's 95% interval of the share of
// true values among outcomes, from resamples draws of whole outcomes
// (each an independent decision) with rng.
func Interval(rng *rand.Rand, outcomes []bool, resamples int) (lo, hi float64) {
	if len(outcomes) == 0 {
		return math.NaN(), math.NaN()
	}
	rates := make([]float64, resamples)
	for k := range rates {
		n := 0
		for range outcomes {
			if outcomes[rng.IntN(len(outcomes))] {
				n++
			}
		}
		rates[k] = float64(n) / float64(len(outcomes))
	}
	sort.Float64s(rates)
	return rates[int(0.025*float64(resamples))], rates[min(resamples-1, int(0.975*float64(resamples)))]
}

// setStart sets r's server-start line to id (replacing one it has), in a
// slice of its own: a clone may share its configuration with the source.
func setStart(r *benchfmt.Result, id string) {
	cfg := make([]benchfmt.Config, 0, len(r.Config)+1)
	for _, c := range r.Config {
		if c.Key != input.ServerStartKey {
			cfg = append(cfg, c)
		}
	}
	r.Config = append(cfg, benchfmt.Config{Key: input.ServerStartKey, Value: []byte(id), File: true})
}

// ClopperPearson is the exact (Clopper–Pearson) two-sided interval of
// confidence conf for a share of k successes in n trials: the Beta
// quantiles (1−conf)/2 of Beta(k, n−k+1) and (1+conf)/2 of Beta(k+1, n−k),
// 0 and 1 at the edges. NaNs for no trials.
func ClopperPearson(k, n int, conf float64) (lo, hi float64) {
	if n <= 0 || k < 0 || k > n {
		return math.NaN(), math.NaN()
	}
	tail := (1 - conf) / 2
	lo, hi = 0, 1
	if k > 0 {
		lo = betaQuantile(tail, float64(k), float64(n-k+1))
	}
	if k < n {
		hi = betaQuantile(1-tail, float64(k+1), float64(n-k))
	}
	return lo, hi
}

// betaQuantile is the q-quantile of Beta(a, b), by bisection on its CDF
// (the regularized incomplete beta function) to 1e-12.
func betaQuantile(q, a, b float64) float64 {
	lo, hi := 0.0, 1.0
	for hi-lo > 1e-12 {
		mid := (lo + hi) / 2
		if mathx.BetaInc(mid, a, b) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
