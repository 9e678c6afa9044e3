package history

import (
	"fmt"
	"math"
	"slices"

	"github.com/vllmperf/vllmperf/internal/results/history/changepoint"
	"github.com/vllmperf/vllmperf/internal/run/stats"
)

// profileSeries are the profile series of one key's tested series: for
// each profile and unit measured by at least two of its benchmarks (every
// value positive, one direction), the geometric mean of those benchmarks'
// run medians, over the runs that measured all of them. A change that
// moves a profile's points together (a slower decode step, a slower
// scheduler) moves this series by the same amount with less noise: k
// points' independent run-to-run noise shrinks by √k, as in the gate's
// profile test (docs/gate.md). Its members are then tested at its change
// point (memberChanges).
func profileSeries(key string, tested []*Series) []*Series {
	type group struct{ profile, unit string }
	members := map[group][]*Series{}
	var order []group
	for _, s := range tested {
		if slices.ContainsFunc(s.Points, func(p Point) bool { return !(p.Median > 0) }) {
			continue
		}
		g := group{s.Profile, s.Unit}
		if members[g] == nil {
			order = append(order, g)
		}
		members[g] = append(members[g], s)
	}
	var out []*Series
	for _, g := range order {
		ms := members[g]
		if len(ms) < 2 || slices.ContainsFunc(ms, func(s *Series) bool { return s.Direction != ms[0].Direction }) {
			continue
		}
		agg := &Series{Key: key, Benchmark: ProfileBenchmark(g.profile, len(ms)), Profile: g.profile, Unit: g.unit,
			Direction: ms[0].Direction, DirectionFrom: ms[0].DirectionFrom, Members: ms}
		logs := map[int][]float64{}
		for _, s := range ms {
			for _, p := range s.Points {
				logs[p.Run] = append(logs[p.Run], math.Log(p.Median))
			}
		}
		// A run the first member lacks is not in the mean: its runs, in
		// order, are the candidates.
		for _, p := range ms[0].Points {
			if l := logs[p.Run]; len(l) == len(ms) {
				agg.Points = append(agg.Points, Point{Run: p.Run, Median: math.Exp(stats.Mean(l))})
			}
		}
		out = append(out, agg)
	}
	return out
}

// ProfileBenchmark names a profile series: "Perf/profile=basic (3
// benchmarks)".
func ProfileBenchmark(profile string, members int) string {
	return fmt.Sprintf("Perf/profile=%s (%d benchmarks)", profile, members)
}

// memberChanges tests each member of a profile series at the profile's
// split c, whose segments are the points [lo, c.Index) and [c.Index, hi):
// the member's runs of those segments, split at the same run, with no
// search over the split (changepoint.Fixed). Benjamini and Hochberg's
// procedure at level over their p-values (bhSequential: each test runs
// only as far as the decision needs); a member that passes it with a
// change of at least MinChange is reported as a change of its own, Via
// the profile series.
func (t *tested) memberChanges(c changepoint.Candidate, lo, hi int, level float64, o CheckOptions, perms int) (changes []Change, permutations int) {
	runLo, runAt, runHi := t.s.Points[lo].Run, t.s.Points[c.Index].Run, t.s.Points[hi-1].Run+1
	var tests []*memberTest
	for _, m := range t.s.Members {
		first := slices.IndexFunc(m.Points, func(p Point) bool { return p.Run >= runLo })
		at := slices.IndexFunc(m.Points, func(p Point) bool { return p.Run >= runAt })
		end := slices.IndexFunc(m.Points, func(p Point) bool { return p.Run >= runHi })
		if end < 0 {
			end = len(m.Points)
		}
		if first < 0 || at < 0 {
			continue
		}
		f, err := changepoint.NewFixed(m.Medians()[first:end], at-first,
			changepoint.Options{MinSize: o.MinSize, Permutations: perms, Seed: seriesSeed(o.Seed, m) ^ uint64(runAt)})
		if err != nil {
			continue // fewer than MinSize runs on a side: not tested
		}
		tests = append(tests, &memberTest{s: m, f: f, first: first, at: at, end: end})
	}
	parallel(tests, func(mt *memberTest) { mt.f.Extend(firstPermutations) })
	seq := make([]sequential, len(tests))
	for i, mt := range tests {
		seq[i] = mt
	}
	// With no member testable (none has MinSize runs on each side), the
	// cutoff is 0 and nothing is reported.
	cut := bhSequential(seq, level)
	var out []Change
	for _, mt := range tests {
		pass := cut > 0 && mt.f.Decide(cut)
		permutations += mt.f.Candidate().Permutations
		if !pass {
			continue
		}
		split := mt.f.Candidate()
		split.Index = mt.at // in the member's points, as the segments [first, end)
		ch := (&tested{kh: t.kh, s: mt.s}).change(split, mt.first, mt.end, o)
		if math.Abs(ch.ChangePct) < 100*o.MinChange {
			continue
		}
		ch.Via = t.s.Benchmark
		out = append(out, ch)
	}
	return out, permutations
}

// memberTest is a member's test at its profile's change: the member's
// points [first, end), split at at.
type memberTest struct {
	s              *Series
	f              *changepoint.Fixed
	first, at, end int
}

func (m *memberTest) bounds() (lo, hi float64) { return m.f.Candidate().Bounds() }
func (m *memberTest) done() bool               { return m.f.Candidate().Done }
func (m *memberTest) decide(cutoff float64)    { m.f.Decide(cutoff) }

// membersOfProfiles tests the members of every profile series at each of
// its change points (memberChanges) and returns found with their changes,
// and how many permutations the tests ran.
// The level is Benjamini and Bogomolov's for families selected by a screen
// ("Selective inference on multiple families of hypotheses", JRSS B 76(1),
// 2014): α times the share of profile series with a change, which keeps
// the expected share of false member changes, averaged over the profiles
// selected, at most α. A member's change replaces its own series' change
// fewer than MinSize runs away but not at the same run: the same step,
// placed where the profile's less noisy series puts it.
func membersOfProfiles(ts []*tested, found []Change, o CheckOptions, perms int) ([]Change, int) {
	var profiles, selected []*tested
	for _, t := range ts {
		if t.s.Members == nil {
			continue
		}
		profiles = append(profiles, t)
		if len(t.kept(o)) > 0 {
			selected = append(selected, t)
		}
	}
	if len(selected) == 0 {
		return found, 0
	}
	level := o.Alpha * float64(len(selected)) / float64(len(profiles))
	permutations := 0
	for _, t := range selected {
		splits := t.kept(o)
		for i, c := range splits {
			lo, hi := segmentBounds(len(t.s.Points), splits, i)
			changes, n := t.memberChanges(c, lo, hi, level, o, perms)
			permutations += n
			for _, mc := range changes {
				near := func(f Change, runs int) bool {
					return f.Key == mc.Key && f.Benchmark == mc.Benchmark && f.Unit == mc.Unit && abs(f.Run.Index-mc.Run.Index) < runs
				}
				if slices.ContainsFunc(found, func(f Change) bool { return near(f, 1) }) {
					continue // its own series found it at the same run
				}
				found = slices.DeleteFunc(found, func(f Change) bool { return f.Via == "" && near(f, o.MinSize) })
				found = append(found, mc)
			}
		}
	}
	return found, permutations
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
