package history

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/vllmperf/vllmperf/internal/results/history/changepoint"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
	"github.com/vllmperf/vllmperf/internal/vocab/verdict"
)

// CheckOptions tune `vllmperf history check` (docs/history.md).
type CheckOptions struct {
	// Alpha is the false discovery rate of Benjamini and Hochberg's
	// procedure over every series tested; when nothing changed it is also
	// the chance of any false alarm in the check.
	Alpha float64
	// MinChange is the smallest relative change of a segment's median
	// that is reported (a fraction); smaller ones are dropped even when
	// significant.
	MinChange float64
	// MinSize is the fewest runs on each side of a change.
	MinSize int
	// Permutations is the most permutations of one test; 0 chooses
	// enough that the smallest p, 1/(R+1), is half Benjamini and
	// Hochberg's first step, α/m (at least 999).
	Permutations int
	// Seed seeds the permutations (each series gets its own stream, so a
	// series' p does not depend on what else is checked).
	Seed uint64
	// Around is how many runs before and after a change its report lists.
	Around int
	// benchmarksOnly leaves the profile series out: the rules of the
	// first quality protocol (docs/history.md), which its test measures.
	benchmarksOnly bool
}

// DefaultCheck are the defaults of the command's flags.
var DefaultCheck = CheckOptions{Alpha: 0.05, MinChange: 0.02, MinSize: changepoint.DefaultMinSize, Seed: 1, Around: 3}

func (o CheckOptions) validate() error {
	switch {
	case !(o.Alpha > 0 && o.Alpha < 1):
		return badInput("{Alpha} %g: want a level between 0 and 1, e.g. 0.05", o.Alpha)
	case !(o.MinChange >= 0 && o.MinChange < 10):
		return badInput("{MinChange} %g: want a fraction ≥ 0, e.g. 0.02 for 2%%", o.MinChange)
	case o.MinSize < 2:
		return badInput("{MinSize} %d: a segment needs at least 2 runs", o.MinSize)
	case o.Permutations < 0:
		return badInput("{Permutations} %d: want 0 (automatic) or more", o.Permutations)
	case o.Around < 0:
		return badInput("{Around} %d: want 0 or more", o.Around)
	}
	return nil
}

// RunRef names a run in reports.
type RunRef struct {
	// Index is the run's place in its key's history, from 0 (JSON and
	// the reports count from 1: "run 9" is Index 8).
	Index  int       `json:"-"`
	ID     string    `json:"id"`
	Date   time.Time `json:"date"`
	Commit string    `json:"commit"`
	Image  string    `json:"image,omitempty"`
	// VLLMVersion is the version the server reported.
	VLLMVersion string `json:"vllm_version,omitempty"`
}

// MarshalJSON adds "run", the run's number counted from 1.
func (r RunRef) MarshalJSON() ([]byte, error) {
	type plain RunRef
	return json.Marshal(struct {
		Run int `json:"run"`
		plain
	}{r.Index + 1, plain(r)})
}

func ref(kh *KeyHistory, i int) RunRef {
	r := kh.Runs[i]
	return RunRef{Index: i, ID: r.ID, Date: r.Date, Commit: r.Commit, Image: r.Config["image"], VLLMVersion: r.Config["vllm-version"]}
}

// AroundRun is a run near a change, with the series' value there.
type AroundRun struct {
	RunRef
	// Value is the run's median; NaN when the run lacks the unit.
	Value float64 `json:"-"`
	// After is true from the change on.
	After bool `json:"after"`
}

// Change is a change point of one series.
type Change struct {
	Key                     string
	Benchmark               string
	Profile, Scenario, Unit string
	Direction               units.Direction
	// Run is the first run after the change.
	Run RunRef
	// Before and After are the medians of the runs' medians in the
	// segments on either side; BeforeRuns and AfterRuns count them.
	Before, After         float64
	BeforeRuns, AfterRuns int
	// ChangePct is 100·(After/Before − 1); ±Inf from a zero Before.
	ChangePct float64
	// Regression is a change in the unit's bad direction.
	Regression bool
	// P is the permutation p-value of the split when it was found;
	// Permutations how many permutations it took. PBound is true when P
	// is an upper bound: the permutations stopped once the split was
	// certain to pass the cutoff (changepoint.Detector.Decide).
	P            float64
	Permutations int
	PBound       bool
	// Via names the profile series whose change point this benchmark's
	// change was tested at (ProfileBenchmark); "" when the benchmark's
	// own series found it.
	Via string
	// Members are the benchmarks whose geometric mean a profile series
	// is (profileSeries); nil for a benchmark's change.
	Members []string
	// Events are the known events within one run of the change.
	Events []Event
	// Around are the runs around the change.
	Around []AroundRun
}

// Confidence is 1 − P.
func (c Change) Confidence() float64 { return 1 - c.P }

// PText is P as the reports write it: "≤ 0.025" when it is a bound.
func (c Change) PText() string {
	if c.PBound {
		return "≤ " + FormatP(c.P)
	}
	return FormatP(c.P)
}

// ConfidenceText is Confidence in percent: "≥ 97.50%" when P is a bound.
func (c Change) ConfidenceText() string {
	if c.PBound {
		return "≥ " + fmtConfidence(c.P)
	}
	return fmtConfidence(c.P)
}

// KeySummary is what one key's history held.
type KeySummary struct {
	Key   string
	Runs  int
	First RunRef
	Last  RunRef
	// Tested counts the series tested, Profiles of them profile series
	// (profileSeries); Constant those with one value throughout, Short
	// those with fewer than 2·MinSize runs, NotGated those without a
	// direction (none is tested).
	Tested, Profiles, Constant, Short, NotGated int
	Events                                      []Event
}

// CheckReport is the outcome of Check.
type CheckReport struct {
	// Store names the store; Thresholds the thresholds file ("" for the
	// defaults).
	Store, Thresholds string
	// Options are the options used, Permutations resolved.
	Options CheckOptions
	Keys    []KeySummary
	// Tested counts the series tested over all keys: Benjamini and
	// Hochberg's m.
	Tested int
	// Cutoff is the p-value at or below which a split is significant:
	// Benjamini and Hochberg's k·α/m over the series' first splits (0 when
	// none is significant; then FirstStep, α/m, is what the most
	// significant series would have needed).
	Cutoff, FirstStep float64
	// Changes are every change found, largest first.
	Changes []Change
	// permutations counts the permutations every test ran, in all.
	permutations int
}

// tested is one series under test.
type tested struct {
	kh    *KeyHistory
	s     *Series
	det   *changepoint.Detector
	first changepoint.Candidate
	// proposed is false when the series has no split to propose.
	proposed bool
	// perms counts the permutations its tests ran.
	perms  int
	splits []changepoint.Candidate
}

// Check runs E-divisive means over every gated series of the key
// histories (docs/history.md): each series' most significant split is
// tested by permutation; Benjamini and Hochberg's procedure over those
// p-values sets the cutoff; a series whose first split passes it is split
// further while the next split passes it too; changes smaller than
// MinChange are dropped (the smallest first, the segments merged).
func Check(khs []*KeyHistory, o CheckOptions) (*CheckReport, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	rep := &CheckReport{Options: o}
	var ts []*tested
	for _, kh := range khs {
		ks := KeySummary{Key: kh.Key, Runs: len(kh.Runs), First: ref(kh, 0), Last: ref(kh, len(kh.Runs)-1), Events: kh.Events}
		var own []*Series
		for _, s := range kh.Series {
			switch {
			case !s.Gated():
				ks.NotGated++
				continue
			case len(s.Points) < 2*o.MinSize:
				ks.Short++
				continue
			}
			if meds := s.Medians(); slices.Min(meds) == slices.Max(meds) {
				ks.Constant++
				continue
			}
			ks.Tested++
			ts = append(ts, &tested{kh: kh, s: s})
			own = append(own, s)
		}
		if o.benchmarksOnly {
			own = nil
		}
		for _, s := range profileSeries(kh.Key, own) {
			ks.Tested++
			ks.Profiles++
			ts = append(ts, &tested{kh: kh, s: s})
		}
		rep.Keys = append(rep.Keys, ks)
		rep.Tested += ks.Tested
	}
	m := len(ts)
	if m == 0 {
		return rep, nil
	}
	rep.FirstStep = o.Alpha / float64(m)
	if o.Permutations == 0 {
		rep.Options.Permutations = max(999, int(math.Ceil(2/rep.FirstStep))-1)
	}
	for _, t := range ts {
		var err error
		t.det, err = changepoint.New(t.s.Medians(), changepoint.Options{MinSize: o.MinSize, Permutations: rep.Options.Permutations, Seed: seriesSeed(o.Seed, t.s)})
		if err != nil {
			return nil, fmt.Errorf("history: %s %s: %w", t.s.Benchmark, t.s.Unit, err)
		}
	}
	rep.Cutoff = firstSplits(ts, o.Alpha)
	parallel(ts, func(t *tested) {
		c, ok := t.first, t.proposed
		for ok {
			pass := t.det.Decide(&c, rep.Cutoff)
			t.perms += c.Permutations
			if !pass {
				break
			}
			t.det.Accept(c)
			t.splits = append(t.splits, c)
			c, ok = t.det.Propose()
		}
	})
	for _, t := range ts {
		rep.permutations += t.perms
	}
	for _, t := range ts {
		rep.Changes = append(rep.Changes, t.changes(o)...)
	}
	var perms int
	rep.Changes, perms = membersOfProfiles(ts, rep.Changes, o, rep.Options.Permutations)
	rep.permutations += perms
	slices.SortStableFunc(rep.Changes, func(a, b Change) int {
		return cmp.Compare(math.Abs(b.ChangePct), math.Abs(a.ChangePct))
	})
	return rep, nil
}

// firstSplits proposes every series' first split and returns Benjamini
// and Hochberg's cutoff over their p-values (bhSequential).
func firstSplits(ts []*tested, alpha float64) float64 {
	parallel(ts, func(t *tested) {
		if t.first, t.proposed = t.det.Propose(); t.proposed {
			t.det.Extend(&t.first, firstPermutations)
		}
	})
	seq := make([]sequential, len(ts))
	for i, t := range ts {
		seq[i] = firstSplit{t}
	}
	return bhSequential(seq, alpha)
}

// sequential is a permutation test that can run further: a series' first
// split, or a benchmark's test at its profile's change point.
type sequential interface {
	// bounds are the least and most p the whole test can still give.
	bounds() (lo, hi float64)
	done() bool
	// decide runs it until it is certain on which side of cutoff its p is.
	decide(cutoff float64)
}

// bhSequential returns Benjamini and Hochberg's cutoff over the tests'
// p-values, running no more permutations than that cutoff needs. Each
// test has run some permutations already (firstPermutations, or fewer
// when Besag and Clifford's stop ended it); the cutoff is computed twice,
// from every p's upper bound and from its lower bound
// (changepoint.Candidate.Bounds). Lowering p-values never shrinks what
// the procedure rejects, so when the two agree, the p-values of the whole
// tests would give that cutoff too; when they do not, the tests on which
// they disagree run until each is certain on which side of the lower
// bounds' cutoff it is, and so on until they agree (at the latest when
// those tests are done). The cutoff is the one every test run to its end
// would give, often for a fraction of the permutations: a clear change
// needs about Exceedances/cutoff of them, not all R.
func bhSequential(ts []sequential, alpha float64) float64 {
	for {
		low, high := make([]float64, len(ts)), make([]float64, len(ts))
		for i, t := range ts {
			low[i], high[i] = t.bounds()
		}
		cutLow, cutHigh := bhCutoff(low, alpha), bhCutoff(high, alpha)
		if cutLow == cutHigh {
			return cutHigh
		}
		var more []sequential
		for i, t := range ts {
			if low[i] <= cutLow && high[i] > cutHigh && !t.done() {
				more = append(more, t)
			}
		}
		if len(more) == 0 {
			// Cannot happen (the tests on which the cutoffs disagree are
			// never all done); the upper bounds' cutoff is the safe side.
			return cutHigh
		}
		// Each runs until it is certain on which side of the lower
		// bounds' cutoff it is: then the two cutoffs agree, or the next
		// round asks about a smaller one.
		parallel(more, func(t sequential) { t.decide(cutLow) })
	}
}

// firstSplit is a series' first split as a sequential test; a series
// with no split to propose has p 1.
type firstSplit struct{ t *tested }

func (f firstSplit) bounds() (lo, hi float64) {
	if !f.t.proposed {
		return 1, 1
	}
	return f.t.first.Bounds()
}

func (f firstSplit) done() bool { return !f.t.proposed || f.t.first.Done }

func (f firstSplit) decide(cutoff float64) { f.t.det.Decide(&f.t.first, cutoff) }

// firstPermutations is how many permutations every first split's test
// runs before firstSplits looks at the bounds.
const firstPermutations = 200

// bhCutoff is Benjamini and Hochberg's cutoff over the p-values ps: k·α/m
// for the largest k whose k-th smallest p is at most it; 0 when there is
// none.
func bhCutoff(ps []float64, alpha float64) float64 {
	ps = slices.Clone(ps)
	slices.Sort(ps)
	m := float64(len(ps))
	cut := 0.0
	for k := len(ps); k >= 1; k-- {
		if level := float64(k) * alpha / m; ps[k-1] <= level {
			cut = level
			break
		}
	}
	return cut
}

// parallel runs fn on every element of ts, on GOMAXPROCS goroutines.
func parallel[T any](ts []T, fn func(T)) {
	work := make(chan T)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				fn(t)
			}
		}()
	}
	for _, t := range ts {
		work <- t
	}
	close(work)
	wg.Wait()
}

// seriesSeed gives every series its own permutation stream.
func seriesSeed(seed uint64, s *Series) uint64 {
	h := fnv.New64a()
	for _, part := range []string{s.Key, s.Benchmark, s.Unit} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return h.Sum64() ^ seed
}

// changes turns the series' splits into changes, dropping those smaller
// than MinChange (the smallest first, merging its segments).
func (t *tested) changes(o CheckOptions) []Change {
	splits := t.kept(o)
	var out []Change
	for i, c := range splits {
		lo, hi := segmentBounds(len(t.s.Points), splits, i)
		out = append(out, t.change(c, lo, hi, o))
	}
	return out
}

// kept are the series' splits in order, less those smaller than
// MinChange (the smallest dropped first, its segments merged).
func (t *tested) kept(o CheckOptions) []changepoint.Candidate {
	splits := slices.Clone(t.splits)
	slices.SortFunc(splits, func(a, b changepoint.Candidate) int { return a.Index - b.Index })
	meds := t.s.Medians()
	for len(splits) > 0 {
		smallest, size := -1, math.Inf(1)
		for i := range splits {
			before, after := segmentMedians(meds, splits, i)
			if d := math.Abs(relChange(before, after)); d < size {
				smallest, size = i, d
			}
		}
		if size >= o.MinChange {
			break
		}
		splits = slices.Delete(splits, smallest, smallest+1)
	}
	return splits
}

// change is the change at split c, between the segment of points [lo,
// c.Index) before it and [c.Index, hi) after it.
func (t *tested) change(c changepoint.Candidate, lo, hi int, o CheckOptions) Change {
	meds := t.s.Medians()
	before, after := median(meds[lo:c.Index]), median(meds[c.Index:hi])
	run := t.s.Points[c.Index].Run
	ch := Change{
		Key: t.kh.Key, Benchmark: t.s.Benchmark, Profile: t.s.Profile, Scenario: t.s.Scenario, Unit: t.s.Unit,
		Direction: t.s.Direction, Run: ref(t.kh, run),
		Before: before, After: after, BeforeRuns: c.Index - lo, AfterRuns: hi - c.Index,
		ChangePct: 100 * relChange(before, after), P: c.P, Permutations: c.Permutations, PBound: !c.Done,
	}
	ch.Regression = (ch.Direction == units.Lower && after > before) || (ch.Direction == units.Higher && after < before)
	for _, m := range t.s.Members {
		ch.Members = append(ch.Members, m.Benchmark)
	}
	for _, e := range t.kh.Events {
		if e.Run >= run-1 && e.Run <= run+1 {
			ch.Events = append(ch.Events, e)
		}
	}
	ch.Around = t.around(run, o.Around)
	return ch
}

// segmentBounds are the point indices [lo, hi) of the segments on either
// side of split i: lo the start of the one before, hi the end of the one
// after.
func segmentBounds(n int, splits []changepoint.Candidate, i int) (lo, hi int) {
	lo, hi = 0, n
	if i > 0 {
		lo = splits[i-1].Index
	}
	if i+1 < len(splits) {
		hi = splits[i+1].Index
	}
	return lo, hi
}

func segmentMedians(meds []float64, splits []changepoint.Candidate, i int) (before, after float64) {
	lo, hi := segmentBounds(len(meds), splits, i)
	at := splits[i].Index
	return median(meds[lo:at]), median(meds[at:hi])
}

// relChange is after/before − 1; ±Inf from a zero before, 0 when both are.
func relChange(before, after float64) float64 {
	switch {
	case before == after:
		return 0
	case before == 0:
		return math.Inf(int(math.Copysign(1, after)))
	}
	return after/before - 1
}

// around lists the runs from n before the change to n−1 after it.
func (t *tested) around(run, n int) []AroundRun {
	byRun := map[int]float64{}
	for _, p := range t.s.Points {
		byRun[p.Run] = p.Median
	}
	var out []AroundRun
	for i := max(0, run-n); i < min(len(t.kh.Runs), run+n); i++ {
		v, ok := byRun[i]
		if !ok {
			v = math.NaN()
		}
		out = append(out, AroundRun{RunRef: ref(t.kh, i), Value: v, After: i >= run})
	}
	return out
}

// Outcome is FAIL when a change is a regression, INCONCLUSIVE when no
// series could be tested, else PASS (improvements pass): exit 1, 3, 0, as
// the gate's.
func (r *CheckReport) Outcome() verdict.Outcome {
	switch {
	case slices.ContainsFunc(r.Changes, func(c Change) bool { return c.Regression }):
		return verdict.OutcomeFail
	case r.Tested == 0:
		return verdict.OutcomeInconclusive
	}
	return verdict.OutcomePass
}

// Regressions counts the changes in the bad direction.
func (r *CheckReport) Regressions() int {
	n := 0
	for _, c := range r.Changes {
		if c.Regression {
			n++
		}
	}
	return n
}
