package input

import (
	"fmt"

	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Benchmark is one benchmark of an Input, grouped as Compare groups it.
type Benchmark struct {
	// Name is the full name without "Benchmark" and the -N GOMAXPROCS
	// suffix: Perf/profile=basic/scenario=concurrency-sweep/conc=8.
	Name              string
	Profile, Scenario string
	// Units are the units in the order the file first wrote them (as
	// written: ttft-p99-ns, not benchfmt's seconds).
	Units []string
	// Values holds each unit's values, one per run, in file order.
	Values map[string][]float64
	// Config holds the distinct values of each configuration key asked
	// for, in first-seen order ("" where a run lacks the key).
	Config map[string][]string
}

// Benchmarks groups the input's results by benchmark, as Compare does
// (the -N suffix ignored), in the order the file lists them, with the
// distinct values of configKeys.
func (in *Input) Benchmarks(configKeys []string) ([]Benchmark, error) {
	g, err := NewGrouping()
	if err != nil {
		return nil, fmt.Errorf("gate: %w", err)
	}
	s := g.Group(in, configKeys)
	out := make([]Benchmark, 0, len(s.Order))
	for _, k := range s.Order {
		b := s.Benches[k]
		out = append(out, Benchmark{Name: b.Name, Profile: b.Profile, Scenario: b.Scenario, Units: b.Units, Values: b.Values, Config: b.Config})
	}
	return out, nil
}

// Direction is the better direction of unit in a benchmark of profile and
// scenario, resolved as Compare resolves it: the input's `Unit unit
// better=` line, else set's better: (nil for the defaults), else
// units.DefaultDirection. from says which decided ("Unit line",
// "thresholds" or "default"). Only Lower and Higher are gated.
func (in *Input) Direction(set *thresholds.Set, profile, scenario, unit string) (dir units.Direction, from string) {
	if dir, m := in.FileDirection(unit); m != nil {
		return dir, "Unit line"
	}
	if set == nil {
		set = thresholds.Empty()
	}
	if dir := set.Better(profile, scenario, unit); dir != units.Unset {
		return dir, "thresholds"
	}
	return units.DefaultDirection(unit), "default"
}
