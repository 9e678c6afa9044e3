// Package changepoint finds the points where a series of measurements
// changes its distribution, with E-divisive means and a permutation test:
//
//   - D. S. Matteson and N. A. James, "A Nonparametric Approach for
//     Multiple Change Point Analysis of Multivariate Data", Journal of the
//     American Statistical Association 109(505):334–345, 2014. The
//     divergence statistic Q̂ (their eq. 5 with exponent α = 1), the
//     hierarchical bisection (their section 3) and the permutation test
//     (section 3.2: permute within every current segment, compare the
//     largest Q̂ of the permuted series with the observed one).
//   - D. Daly, W. Brown, H. Ingo, J. O'Leary and D. Bradford, "The Use of
//     Change Point Detection to Identify Software Performance Regressions
//     in a Continuous Integration System", ICPE 2020, and its open-source
//     descendant Hunter (M. Fleming et al., ICPE 2023): the same method on
//     CI performance series.
//   - J. Besag and P. Clifford, "Sequential Monte Carlo p-values",
//     Biometrika 78(2):301–304, 1991: the permutations stop once h of them
//     reach the observed statistic (p = h/L after L permutations), so that a
//     series without a change costs a few hundred permutations and one
//     with a clear change gets the full count.
//
// A Detector holds one series; Next proposes the best split of the current
// segments with its p-value, and Accept keeps it. Segment runs the usual
// loop at one significance level; callers that test many series at once
// (package history) call Next and Accept themselves to share one level.
package changepoint

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Options tune the detector. The zero value of a field means its default.
type Options struct {
	// MinSize is the fewest observations a segment may hold (at least 2:
	// Q̂ needs two points on each side to measure their spread).
	MinSize int
	// Permutations is the most random permutations of one test; the
	// smallest p it can give is 1/(Permutations+1).
	Permutations int
	// Exceedances stops a test early once this many permutations reach
	// the observed statistic (Besag and Clifford's h).
	Exceedances int
	// Seed seeds the permutations: the same series, options and seed give
	// the same p-values.
	Seed uint64
}

// The defaults of Options.
const (
	DefaultMinSize      = 3
	DefaultPermutations = 9999
	DefaultExceedances  = 20
)

func (o Options) withDefaults() Options {
	if o.MinSize == 0 {
		o.MinSize = DefaultMinSize
	}
	if o.Permutations == 0 {
		o.Permutations = DefaultPermutations
	}
	if o.Exceedances == 0 {
		o.Exceedances = DefaultExceedances
	}
	return o
}

// Candidate is a proposed change point.
type Candidate struct {
	// Index is the first observation after the change (0-based).
	Index int
	// Stat is Matteson and James's Q̂ of the split: how far apart the
	// distributions on the two sides are, weighted by their sizes.
	Stat float64
	// P is the permutation p-value: the chance that a series with no
	// change in the current segments splits at least as clearly. Until
	// the test is Done it is the upper bound of Bounds: the p-value the
	// test would give with all its permutations is below it.
	P float64
	// Permutations is how many permutations the test ran; Exceeded how
	// many of them reached Stat.
	Permutations, Exceeded int
	// Done is true when the test has run to its end: Exceedances reached
	// or every permutation run; P is then exact.
	Done bool

	segs     [][2]int
	rng      *rand.Rand
	limit, h int
}

// Bounds are the least and the most p-value the test can still give:
// after L permutations with g reaching Stat, it either stops later at the
// h-th (p = h/L' > h/R) or runs all R (p = (g'+1)/(R+1) with g' ≥ g), so
// lo = (g+1)/(R+1); and p < h/L either way, so hi = min(1, h/L). Both are
// P once the test is Done. A decision that holds for every p in [lo, hi]
// is the decision the whole test would give.
func (c Candidate) Bounds() (lo, hi float64) {
	if c.Done {
		return c.P, c.P
	}
	hi = 1
	if c.Permutations > 0 {
		hi = min(1, float64(c.h)/float64(c.Permutations))
	}
	return float64(c.Exceeded+1) / float64(c.limit+1), hi
}

// Detector finds change points in one series.
type Detector struct {
	xs   []float64
	opts Options
	cps  []int // accepted change points, sorted
	buf  []float64
	sums pairSums
	// tests counts the candidates proposed: each gets its own permutation
	// stream, so that stopping one test early does not change the next.
	tests uint64
}

// ErrConstant is returned for a series whose values are all equal: it has
// no change to find.
var ErrConstant = errors.New("changepoint: the series is constant")

// New starts a detector on xs (copied). A series with a NaN or an
// infinity, options out of range, and a constant series are errors.
func New(xs []float64, opts Options) (*Detector, error) {
	opts = opts.withDefaults()
	switch {
	case opts.MinSize < 2:
		return nil, fmt.Errorf("changepoint: MinSize %d: a segment needs at least 2 observations", opts.MinSize)
	case opts.Permutations < 1:
		return nil, fmt.Errorf("changepoint: Permutations %d: want at least 1", opts.Permutations)
	case opts.Exceedances < 1:
		return nil, fmt.Errorf("changepoint: Exceedances %d: want at least 1", opts.Exceedances)
	}
	if err := finite(xs); err != nil {
		return nil, err
	}
	if len(xs) > 0 && slices.Min(xs) == slices.Max(xs) {
		return nil, ErrConstant
	}
	return &Detector{
		xs:   slices.Clone(xs),
		opts: opts,
		buf:  make([]float64, len(xs)),
	}, nil
}

// finite refuses a series with a NaN or an infinity, naming it.
func finite(xs []float64) error {
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("changepoint: observation %d is %v", i, x)
		}
	}
	return nil
}

// ChangePoints are the accepted change points, in order.
func (d *Detector) ChangePoints() []int { return slices.Clone(d.cps) }

// Segments are the current segments' bounds [start, end).
func (d *Detector) Segments() [][2]int {
	var out [][2]int
	start := 0
	for _, c := range d.cps {
		out = append(out, [2]int{start, c})
		start = c
	}
	return append(out, [2]int{start, len(d.xs)})
}

// Next proposes the best split of the current segments and tests it with
// all its permutations (Propose, then Extend to the end); ok is false when
// no segment is long enough to split (2·MinSize) or none has any spread.
func (d *Detector) Next() (c Candidate, ok bool) {
	if c, ok = d.Propose(); ok {
		d.Extend(&c, d.opts.Permutations)
	}
	return c, ok
}

// Propose finds the best split of the current segments without testing
// it (P 1, Bounds [1/(R+1), 1]); Extend and Decide test it. ok is false
// when no segment can be split.
func (d *Detector) Propose() (c Candidate, ok bool) {
	segs := d.Segments()
	idx, stat := d.best(d.xs, segs)
	if idx < 0 {
		return Candidate{}, false
	}
	d.tests++
	// The first test's stream is the seed's own; each later one's is
	// the seed's with the test's number.
	return Candidate{Index: idx, Stat: stat, P: 1, segs: segs, limit: d.opts.Permutations, h: d.opts.Exceedances,
		rng: rand.New(rand.NewPCG(d.opts.Seed, 0x9e3779b97f4a7c15+d.tests-1))}, true
}

// Extend runs c's permutations (Besag and Clifford's sequential test)
// until it has run upto of them, reached Exceedances, or run all
// Permutations; c must come from this detector's latest Propose or Next.
func (d *Detector) Extend(c *Candidate, upto int) {
	d.extend(c, func() bool { return c.Permutations >= upto })
}

// Decide runs c's permutations until it is certain whether the test's
// p-value is at most cutoff (Bounds on one side of it, or the test done)
// and says whether it is: the same answer as the whole test's, often
// after far fewer permutations.
func (d *Detector) Decide(c *Candidate, cutoff float64) bool {
	d.extend(c, func() bool {
		lo, hi := c.Bounds()
		return hi <= cutoff || lo > cutoff
	})
	_, hi := c.Bounds()
	return hi <= cutoff
}

func (d *Detector) extend(c *Candidate, stop func() bool) {
	// Ties: a permutation that reproduces the observed split gives the
	// same Q̂ up to rounding; it counts as reaching it.
	reach := c.Stat - 1e-9*math.Abs(c.Stat)
	for !c.Done && !stop() {
		copy(d.buf, d.xs)
		for _, s := range c.segs {
			part := d.buf[s[0]:s[1]]
			c.rng.Shuffle(len(part), func(i, j int) { part[i], part[j] = part[j], part[i] })
		}
		c.Permutations++
		if _, q := d.best(d.buf, c.segs); q >= reach {
			c.Exceeded++
		}
		c.settle()
	}
}

// Accept keeps c as a change point.
func (d *Detector) Accept(c Candidate) {
	if c.Index <= 0 || c.Index >= len(d.xs) || slices.Contains(d.cps, c.Index) {
		return
	}
	d.cps = append(d.cps, c.Index)
	slices.Sort(d.cps)
}

// best is the split with the largest Q̂ over the segments of xs; -1 when
// none can be split.
func (d *Detector) best(xs []float64, segs [][2]int) (int, float64) {
	d.sums.reset(xs)
	idx, stat := -1, math.Inf(-1)
	for _, s := range segs {
		tau, _, q := d.sums.bestSplit(s[0], s[1], d.opts.MinSize)
		if tau >= 0 && q > stat {
			idx, stat = tau, q
		}
	}
	return idx, stat
}

// BestSplit returns the split of v with the largest Q̂ (exponent α = 1):
// τ and κ such that v[:τ] and v[τ:κ], each at least minSize long, are the
// farthest apart, and that Q̂; τ is -1 when v is shorter than 2·minSize.
// For sizes m = τ and n = κ − τ:
//
//	Q̂(τ, κ) = mn/(m+n) · ( 2/(mn)·Σ|xᵢ−yⱼ| − Σ_{i<k}|xᵢ−xₖ|/C(m,2) − Σ_{j<k}|yⱼ−yₖ|/C(n,2) )
//
// Maximising over κ as well as τ (Matteson and James, section 3.1) finds a
// change that is later undone (a regression, then its fix), where the two
// ends of the series look alike. Every (τ, κ) costs O(1) from the
// distances' two-dimensional prefix sums, O(len(v)²) in all.
func BestSplit(v []float64, minSize int) (tau, kappa int, q float64) {
	var s pairSums
	s.reset(v)
	return s.bestSplit(0, len(v), minSize)
}

// pairSums holds the prefix sums P[a][b] = Σ_{i<a, j<b} |xᵢ − xⱼ| of a
// series, (n+1)² of them, row-major.
type pairSums struct {
	n int
	p []float64
}

func (s *pairSums) reset(xs []float64) {
	n := len(xs)
	s.n = n
	if cap(s.p) < (n+1)*(n+1) {
		s.p = make([]float64, (n+1)*(n+1))
	}
	s.p = s.p[:(n+1)*(n+1)]
	w := n + 1
	for j := 0; j <= n; j++ {
		s.p[j] = 0
	}
	for i := 1; i <= n; i++ {
		row := 0.0
		s.p[i*w] = 0
		for j := 1; j <= n; j++ {
			row += math.Abs(xs[i-1] - xs[j-1])
			s.p[i*w+j] = s.p[(i-1)*w+j] + row
		}
	}
}

// block is Σ |xᵢ − xⱼ| over i in [a, b) and j in [c, d).
func (s *pairSums) block(a, b, c, d int) float64 {
	w := s.n + 1
	return s.p[b*w+d] - s.p[a*w+d] - s.p[b*w+c] + s.p[a*w+c]
}

// bestSplit searches the segment [lo, hi): X = [lo, τ), Y = [τ, κ).
func (s *pairSums) bestSplit(lo, hi, minSize int) (int, int, float64) {
	if minSize < 2 || hi-lo < 2*minSize {
		return -1, -1, math.NaN()
	}
	bestTau, bestKappa, bestQ := -1, -1, math.Inf(-1)
	for tau := lo + minSize; tau <= hi-minSize; tau++ {
		for kappa := tau + minSize; kappa <= hi; kappa++ {
			if q := s.q(lo, tau, kappa); q > bestQ {
				bestTau, bestKappa, bestQ = tau, kappa, q
			}
		}
	}
	return bestTau, bestKappa, bestQ
}

// q is Q̂ of the split X = [lo, τ), Y = [τ, κ).
func (s *pairSums) q(lo, tau, kappa int) float64 {
	m, n := float64(tau-lo), float64(kappa-tau)
	wx := s.block(lo, tau, lo, tau) / 2 / (m * (m - 1) / 2)
	wy := s.block(tau, kappa, tau, kappa) / 2 / (n * (n - 1) / 2)
	e := 2*s.block(lo, tau, tau, kappa)/(m*n) - wx - wy
	return m * n / (m + n) * e
}

// Fixed is the test of one given split of a series, X = xs[:τ] and
// Y = xs[τ:], without searching for it: Q̂ of that split against the Q̂
// of the same split of randomly permuted xs (Besag and Clifford's
// sequential test, as a Detector's). It is the test for a change at a
// place another series chose (package history: a profile's change point,
// tested on each of its benchmarks); with no search its p-value is
// smaller than a searched split's for the same data.
type Fixed struct {
	xs, buf, side []float64
	// total is Σ_{i<j} |xᵢ − xⱼ| over the whole series, the same for
	// every permutation of it.
	total float64
	c     Candidate
}

// NewFixed starts the test of the split of xs (copied) at tau; each side
// needs MinSize observations.
func NewFixed(xs []float64, tau int, opts Options) (*Fixed, error) {
	opts = opts.withDefaults()
	switch {
	case opts.MinSize < 2 || tau < opts.MinSize || len(xs)-tau < opts.MinSize:
		return nil, fmt.Errorf("changepoint: split %d of %d observations: each side needs at least %d (MinSize)", tau, len(xs), max(2, opts.MinSize))
	case opts.Permutations < 1 || opts.Exceedances < 1:
		return nil, fmt.Errorf("changepoint: Permutations %d, Exceedances %d: want at least 1 each", opts.Permutations, opts.Exceedances)
	}
	if err := finite(xs); err != nil {
		return nil, err
	}
	f := &Fixed{xs: slices.Clone(xs), buf: slices.Clone(xs), side: make([]float64, len(xs))}
	f.total = f.pairSum(f.xs)
	f.c = Candidate{Index: tau, P: 1, limit: opts.Permutations, h: opts.Exceedances,
		rng: rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15))}
	f.c.Stat = f.q(f.xs)
	return f, nil
}

// q is Q̂ of v's split at the test's τ (v a permutation of the series):
// the sums of distances within X and within Y from sorted copies, the
// sum across as what the total leaves, O(n log n) instead of the
// prefix sums' O(n²).
func (f *Fixed) q(v []float64) float64 {
	tau := f.c.Index
	m, n := float64(tau), float64(len(v)-tau)
	sx, sy := f.pairSum(v[:tau]), f.pairSum(v[tau:])
	cross := f.total - sx - sy
	e := 2*cross/(m*n) - sx/(m*(m-1)/2) - sy/(n*(n-1)/2)
	return m * n / (m + n) * e
}

// pairSum is Σ_{i<j} |vᵢ − vⱼ|: over v sorted, each value counts
// positively for those below it and negatively for those above.
func (f *Fixed) pairSum(v []float64) float64 {
	w := f.side[:len(v)]
	copy(w, v)
	slices.Sort(w)
	sum := 0.0
	for j, x := range w {
		sum += float64(2*j-len(w)+1) * x
	}
	return sum
}

// FixedSplit runs the whole test of the split of xs at tau (NewFixed,
// then every permutation it needs).
func FixedSplit(xs []float64, tau int, opts Options) (Candidate, error) {
	f, err := NewFixed(xs, tau, opts)
	if err != nil {
		return Candidate{}, err
	}
	f.Extend(math.MaxInt)
	return f.Candidate(), nil
}

// Candidate is the split with the test's state: P, Bounds, Done.
func (f *Fixed) Candidate() Candidate { return f.c }

// Extend runs permutations until upto of them have run or the test is
// done.
func (f *Fixed) Extend(upto int) {
	f.extend(func() bool { return f.c.Permutations >= upto })
}

// Decide runs permutations until it is certain whether the test's p is at
// most cutoff, and says whether it is (as Detector.Decide).
func (f *Fixed) Decide(cutoff float64) bool {
	f.extend(func() bool {
		lo, hi := f.c.Bounds()
		return hi <= cutoff || lo > cutoff
	})
	_, hi := f.c.Bounds()
	return hi <= cutoff
}

func (f *Fixed) extend(stop func() bool) {
	c := &f.c
	n := len(f.xs)
	reach := c.Stat - 1e-9*math.Abs(c.Stat)
	for !c.Done && !stop() {
		c.rng.Shuffle(n, func(i, j int) { f.buf[i], f.buf[j] = f.buf[j], f.buf[i] })
		c.Permutations++
		if f.q(f.buf) >= reach {
			c.Exceeded++
		}
		c.settle()
	}
}

// settle ends the test when it has reached its Exceedances or run every
// permutation, and otherwise keeps P at its upper bound.
func (c *Candidate) settle() {
	switch {
	case c.Exceeded == c.h:
		c.P, c.Done = float64(c.Exceeded)/float64(c.Permutations), true
	case c.Permutations == c.limit:
		c.P, c.Done = float64(c.Exceeded+1)/float64(c.Permutations+1), true
	default:
		_, c.P = c.Bounds()
	}
}

// Segment finds the change points of xs at significance level alpha: the
// best split is kept while its permutation p is at most alpha. A constant
// series has none.
func Segment(xs []float64, alpha float64, opts Options) ([]Candidate, error) {
	d, err := New(xs, opts)
	if errors.Is(err, ErrConstant) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Candidate
	for {
		c, ok := d.Next()
		if !ok || c.P > alpha {
			return out, nil
		}
		d.Accept(c)
		out = append(out, c)
	}
}
