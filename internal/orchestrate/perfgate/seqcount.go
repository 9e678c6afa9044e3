package perfgate

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/gate"
	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/gate/sequential"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
)

// EnvSequential turns the sequential count on for a run gated against a
// baseline: its spending function, pocock or obrien-fleming. VLLMPERF_COUNT is
// then the cap; the first look is at thresholds.yaml's min_samples.
var EnvSequential = envvar.Sequential.Name

// sequentialFromEnv reads EnvSequential.
func sequentialFromEnv() (string, error) {
	v := strings.TrimSpace(os.Getenv(EnvSequential))
	if v == "" {
		return "", nil
	}
	if _, ok := sequential.Spendings[v]; !ok {
		return "", fmt.Errorf("%s=%q: want pocock or obrien-fleming (the α-spending function of the sequential count), or unset for the fixed count", EnvSequential, v)
	}
	return v, nil
}

// sequentialNote adds what the sequential count does to the plan's note.
func (o Options) sequentialNote(note string, hasBase bool) string {
	if o.Sequential == "" {
		return note
	}
	say := fmt.Sprintf("%s=%s: the count is the cap; every point runs min_samples times, then only the undecided ones run on", EnvSequential, o.Sequential)
	if !hasBase {
		say = fmt.Sprintf("%s=%s: no baseline on this key yet, so this run records one at the full count", EnvSequential, o.Sequential)
	}
	if note == "" {
		return say
	}
	return note + "; " + say
}

// sequentialBench is a bench function that runs the sequential count up
// to count runs a point: min_samples runs of every point into the
// results folder's bench.txt, a look against basePath, then go test
// again for the undecided points only (their runs appended to bench.txt,
// their results folders more-N-D/, a go test for each depth D of name),
// each look at its share of α. It sets *set to the last look's
// thresholds, which the gate step then uses.
func (o Options) sequentialBench(cfg suite.Config, basePath string, set **thresholds.Set) func(context.Context, int) (string, int, error) {
	return func(ctx context.Context, count int) (string, int, error) {
		first := min(max((*set).Gate("", "", "").MinSamples, 1), count)
		d := sequential.Design{Min: first, Cap: count, Spending: sequential.Spendings[o.Sequential]}
		s := &benchSides{o: o, ctx: ctx, basePath: basePath}
		res, err := sequential.Run(d, *set, s, nil)
		if err != nil {
			return s.path, s.code, err
		}
		prev := 0
		for _, lk := range res.Looks {
			fmt.Fprintf(o.Stdout, "perf-gate: sequential count: look at %d runs a point (α × %.2f): %s, %d benchmarks open\n", lk.Runs, lk.Share, lk.Decision, len(lk.Undecided))
			prev = lk.Runs
		}
		last := res.Looks[len(res.Looks)-1]
		*set = (*set).WithAlphaScaled(last.Share)
		fmt.Fprintf(o.Stdout, "perf-gate: sequential count (%s spending, cap %d): decided after %d runs of the longest point; %d runs in all where the fixed count runs %d\n",
			d.Spending.Name, count, prev, s.total, count*s.points)
		return s.path, s.code, nil
	}
}

// benchSides are the suite's runs (go test -bench) and the key's baseline,
// as package sequential drives them.
type benchSides struct {
	o        Options
	ctx      context.Context
	basePath string
	path     string         // bench.txt
	code     int            // the worst go test exit status
	have     map[string]int // runs a benchmark has
	points   int            // benchmarks in the first run
	total    int            // runs of every benchmark, summed
}

func (s *benchSides) Extend(runs int, only []string) error {
	if s.path == "" { // the first look: every point
		path, code, err := s.o.benchWith(s.ctx, runs, "Perf", s.o.Results, "")
		s.path, s.code = path, worst(s.code, code)
		if err != nil {
			return err
		}
		err = s.count()
		s.points = len(s.have)
		return err
	}
	// go test runs a benchmark whose name is shorter than the pattern
	// only to look for sub-benchmarks, never reporting it: one pattern for
	// each depth of name (scenario=startup, conc=8, prompt=short/conc=1).
	byDepth := map[int][]string{}
	for _, b := range only {
		if runs > s.have[b] {
			d := strings.Count(b, "/")
			byDepth[d] = append(byDepth[d], b)
		}
	}
	depths := slices.Sorted(maps.Keys(byDepth))
	for _, d := range depths {
		group := byDepth[d]
		more := 0
		for _, b := range group {
			more = max(more, runs-s.have[b])
		}
		dir := filepath.Join(s.o.Results, fmt.Sprintf("more-%d-%d", runs, d))
		_, code, err := s.o.benchWith(s.ctx, more, benchPattern(group), dir, s.path)
		s.code = worst(s.code, code)
		if err != nil {
			return err
		}
	}
	return s.count()
}

// count reads how many runs each benchmark has in bench.txt.
func (s *benchSides) count() error {
	in, err := input.ReadFile(s.path)
	if err != nil {
		return err
	}
	s.have, s.total = map[string]int{}, 0
	for _, r := range in.Results {
		s.have[rowName(string(r.Name))]++
		s.total++
	}
	return nil
}

func (s *benchSides) Compare(set *thresholds.Set) (*gate.Report, error) {
	base, err := input.ReadFile(s.basePath)
	if err != nil {
		return nil, err
	}
	next, err := input.ReadFile(s.path)
	if err != nil {
		return nil, err
	}
	return gate.Compare(base, next, set, gate.Options{})
}

// rowName is a result's name as the gate's rows name it.
func rowName(name string) string {
	return strings.TrimPrefix(procs.ReplaceAllString(name, ""), "Benchmark")
}

// benchPattern is go test's -bench pattern that selects the benchmarks
// (gate row names: Perf/profile=P/scenario=S/POINT): per level of the
// name, the alternatives of that level. It selects every combination of
// them, so a few more benchmarks than named may run; never fewer.
func benchPattern(names []string) string {
	var levels [][]string
	for _, n := range names {
		bn, err := benchname.Parse(n)
		if err != nil {
			continue
		}
		elems := strings.Split(bn.String(), "/")
		for i, e := range elems {
			if i == len(levels) {
				levels = append(levels, nil)
			}
			if !slices.Contains(levels[i], e) {
				levels[i] = append(levels[i], e)
			}
		}
	}
	parts := []string{"^BenchmarkPerf$"}
	for _, alts := range levels {
		quoted := make([]string, len(alts))
		for i, a := range alts {
			quoted[i] = regexp.QuoteMeta(a)
		}
		slices.Sort(quoted)
		parts = append(parts, "^("+strings.Join(quoted, "|")+")$")
	}
	return strings.Join(parts, "/")
}
