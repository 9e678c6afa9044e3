package input

import (
	"fmt"
	"slices"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
)

// Grouping sorts both sides' results into benchmarks with benchproc. Both
// sides share one projection, so their keys compare equal and sort in the
// order benchmarks first appear (baseline first).
type Grouping struct {
	name  *benchproc.Projection // .fullname without the -N GOMAXPROCS suffix
	procs *benchproc.Projection // /gomaxprocs
	scope *benchproc.Projection // /profile,/scenario
	field struct{ name, procs, profile, scenario *benchproc.Field }
	// byName holds each distinct result name's projections: every
	// projection reads the name alone, and a side repeats each name once
	// a run.
	byName map[string]projected
}

// projected is what the Grouping's projections make of one result name.
type projected struct {
	key                      benchproc.Key
	profile, scenario, procs string
}

// project projects r, once per distinct name.
func (g *Grouping) project(r *benchfmt.Result) projected {
	if p, ok := g.byName[string(r.Name)]; ok {
		return p
	}
	key, scope := g.name.Project(r), g.scope.Project(r)
	p := projected{key: key, profile: scope.Get(g.field.profile), scenario: scope.Get(g.field.scenario),
		procs: g.procs.Project(r).Get(g.field.procs)}
	g.byName[string(r.Name)] = p
	return p
}

// NewGrouping makes a grouping: give every side of one comparison to
// the same one, so that their keys compare equal.
func NewGrouping() (*Grouping, error) {
	g := &Grouping{byName: map[string]projected{}}
	// One parser for the name and /gomaxprocs: a key projected on its own
	// is excluded from .fullname (benchstat's -ignore /gomaxprocs), so a
	// baseline recorded on a machine with another core count still lines
	// up. /profile and /scenario come from a second parser, which keeps
	// them in the name.
	var named, scoped benchproc.ProjectionParser
	var err error
	if g.name, err = named.Parse(".fullname", nil); err != nil {
		return nil, err
	}
	if g.procs, err = named.Parse("/gomaxprocs", nil); err != nil {
		return nil, err
	}
	if g.scope, err = scoped.Parse("/"+benchname.KeyProfile+",/"+benchname.KeyScenario, nil); err != nil {
		return nil, err
	}
	g.field.name = g.name.Fields()[0]
	g.field.procs = g.procs.Fields()[0]
	g.field.profile = g.scope.Fields()[0]
	g.field.scenario = g.scope.Fields()[1]
	return g, nil
}

// Bench is one benchmark's runs on one side.
type Bench struct {
	Key               benchproc.Key
	Name              string
	Profile, Scenario string
	Units             []string             // in the order the file first wrote them
	Values            map[string][]float64 // unit (as written) → one value per run, file order
	Config            map[string][]string  // config key → distinct values, first-seen order
	GoMaxProcs        []string             // distinct values
	Starts            []string             // distinct ServerStartKey values ("" for a result without it)
	// FirstFile and FirstLine are where its first result is; NResults
	// counts its results.
	FirstFile           string
	FirstLine, NResults int
}

// Side is one Input grouped by benchmark.
type Side struct {
	In      *Input
	Benches map[benchproc.Key]*Bench
	// Order is the benchmarks' keys in the order the file lists them.
	Order []benchproc.Key
}

// Group sorts in's results into benchmarks, keeping the distinct values
// of configKeys.
func (g *Grouping) Group(in *Input, configKeys []string) *Side {
	s := &Side{In: in, Benches: map[benchproc.Key]*Bench{}}
	for _, r := range in.Results {
		p := g.project(r)
		key := p.key
		b := s.Benches[key]
		if b == nil {
			b = &Bench{
				Key:      key,
				Name:     key.Get(g.field.name),
				Profile:  p.profile,
				Scenario: p.scenario,
				Values:   map[string][]float64{},
				Config:   map[string][]string{},
			}
			b.FirstFile, b.FirstLine = r.Pos()
			s.Benches[key] = b
			s.Order = append(s.Order, key)
		}
		b.NResults++
		for _, v := range r.Values {
			unit, value := AsWritten(v)
			if _, seen := b.Values[unit]; !seen {
				b.Units = append(b.Units, unit)
			}
			b.Values[unit] = append(b.Values[unit], value)
		}
		for _, k := range configKeys {
			b.Config[k] = addDistinct(b.Config[k], r.GetConfig(k))
		}
		b.GoMaxProcs = addDistinct(b.GoMaxProcs, p.procs)
		b.Starts = addDistinct(b.Starts, r.GetConfig(ServerStartKey))
	}
	return s
}

// Profiles lists the distinct /profile values of a side, sorted.
func (s *Side) Profiles() []string {
	var out []string
	for _, b := range s.Benches {
		if b.Profile != "" {
			out = addDistinct(out, b.Profile)
		}
	}
	slices.Sort(out)
	return out
}

// Pos is where the benchmark's first result is: "file:line".
func (b *Bench) Pos() string {
	return fmt.Sprintf("%s:%d", b.FirstFile, b.FirstLine)
}

func addDistinct(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}
