package gate

import (
	"fmt"
	"slices"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchproc"

	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
)

// grouping sorts both sides' results into benchmarks with benchproc. Both
// sides share one projection, so their keys compare equal and sort in the
// order benchmarks first appear (baseline first).
type grouping struct {
	name  *benchproc.Projection // .fullname without the -N GOMAXPROCS suffix
	procs *benchproc.Projection // /gomaxprocs
	scope *benchproc.Projection // /profile,/scenario
	field struct{ name, procs, profile, scenario *benchproc.Field }
	// byName holds each distinct result name's projections: every
	// projection reads the name alone, and a side repeats each name once
	// a run.
	byName map[string]projected
}

// projected is what the grouping's projections make of one result name.
type projected struct {
	key                      benchproc.Key
	profile, scenario, procs string
}

// project projects r, once per distinct name.
func (g *grouping) project(r *benchfmt.Result) projected {
	if p, ok := g.byName[string(r.Name)]; ok {
		return p
	}
	key, scope := g.name.Project(r), g.scope.Project(r)
	p := projected{key: key, profile: scope.Get(g.field.profile), scenario: scope.Get(g.field.scenario),
		procs: g.procs.Project(r).Get(g.field.procs)}
	g.byName[string(r.Name)] = p
	return p
}

func newGrouping() (*grouping, error) {
	g := &grouping{byName: map[string]projected{}}
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

// bench is one benchmark's runs on one side.
type bench struct {
	key                benchproc.Key
	name               string
	profile, scenario  string
	units              []string             // in the order the file first wrote them
	values             map[string][]float64 // unit (as written) → one value per run, file order
	config             map[string][]string  // config key → distinct values, first-seen order
	gomaxprocs         []string             // distinct values
	starts             []string             // distinct ServerStartKey values ("" for a result without it)
	firstFile          string
	firstLine, nResult int
}

// sideData is one Input grouped by benchmark.
type sideData struct {
	in      *Input
	benches map[benchproc.Key]*bench
	order   []benchproc.Key
}

func (g *grouping) group(in *Input, configKeys []string) *sideData {
	s := &sideData{in: in, benches: map[benchproc.Key]*bench{}}
	for _, r := range in.Results {
		p := g.project(r)
		key := p.key
		b := s.benches[key]
		if b == nil {
			b = &bench{
				key:      key,
				name:     key.Get(g.field.name),
				profile:  p.profile,
				scenario: p.scenario,
				values:   map[string][]float64{},
				config:   map[string][]string{},
			}
			b.firstFile, b.firstLine = r.Pos()
			s.benches[key] = b
			s.order = append(s.order, key)
		}
		b.nResult++
		for _, v := range r.Values {
			unit, value := AsWritten(v)
			if _, seen := b.values[unit]; !seen {
				b.units = append(b.units, unit)
			}
			b.values[unit] = append(b.values[unit], value)
		}
		for _, k := range configKeys {
			b.config[k] = addDistinct(b.config[k], r.GetConfig(k))
		}
		b.gomaxprocs = addDistinct(b.gomaxprocs, p.procs)
		b.starts = addDistinct(b.starts, r.GetConfig(ServerStartKey))
	}
	return s
}

// profiles lists the distinct /profile values of a side, sorted.
func (s *sideData) profiles() []string {
	var out []string
	for _, b := range s.benches {
		if b.profile != "" {
			out = addDistinct(out, b.profile)
		}
	}
	slices.Sort(out)
	return out
}

func (b *bench) pos() string {
	return fmt.Sprintf("%s:%d", b.firstFile, b.firstLine)
}

func addDistinct(list []string, v string) []string {
	if slices.Contains(list, v) {
		return list
	}
	return append(list, v)
}
