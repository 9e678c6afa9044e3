package history

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/vllmperf/vllmperf/internal/gate/input"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
	"github.com/vllmperf/vllmperf/internal/vocab/thresholds"
	"github.com/vllmperf/vllmperf/internal/vocab/units"
)

// Filter selects runs, benchmarks and units. The zero value selects all.
type Filter struct {
	// Key holds configuration lines a run must have (KeyConfig or
	// EventConfig keys): gpu=sim:rtx4090-seed, size=quick.
	Key map[string]string
	// Benchmarks are run-name patterns (profile=basic/scenario=ttft-tpot,
	// path.Match globs per element, a prefix matching every point below
	// it), as `vllmperf upgrade-gate --points` takes them; empty for all.
	Benchmarks []string
	// Units are the units to keep; empty for all.
	Units []string
	// Since and Until bound the runs kept, inclusive: a run ID, or a UTC
	// date (2026-12-03) or time (RFC 3339); empty for no bound.
	Since, Until string
	// Last keeps only the newest Last runs of each key (0 for all).
	Last int
}

// ParseKey reads "gpu=sim:rtx4090-seed,size=quick".
func ParseKey(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	known := append(slices.Clone(KeyConfig), EventConfig...)
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" {
			return nil, badInput("{Key} %q: want key=value pairs separated by commas, e.g. gpu=sim:rtx4090-seed,size=quick", s)
		}
		if !slices.Contains(known, k) {
			return nil, badInput("{Key} %q: %q is not a configuration line of the store's runs: choose from %s", s, k, strings.Join(known, ", "))
		}
		out[k] = v
	}
	return out, nil
}

func (f Filter) keepRun(r *Run) bool {
	for k, v := range f.Key {
		if r.Config[k] != v {
			return false
		}
	}
	return true
}

// keepBenchmark matches a full name (Perf/profile=…) against the patterns.
func (f Filter) keepBenchmark(name string) bool {
	if len(f.Benchmarks) == 0 {
		return true
	}
	elems := strings.Split(benchname.Short(name), "/")
	for _, p := range f.Benchmarks {
		pe := strings.Split(benchname.Short(p), "/")
		if len(pe) > len(elems) {
			continue
		}
		ok := true
		for i, e := range pe {
			if m, err := path.Match(e, elems[i]); err != nil || !m {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func (f Filter) keepUnit(u string) bool { return len(f.Units) == 0 || slices.Contains(f.Units, u) }

// bounds resolves Since and Until to dates: a run's date, a day (Until
// takes its end) or a time.
func (f Filter) bounds(runs []*Run) (since, until time.Time, err error) {
	parse := func(field, v string, end bool) (time.Time, error) {
		if v == "" {
			return time.Time{}, nil
		}
		for _, r := range runs {
			if r.ID == v {
				return r.Date, nil
			}
		}
		if t, err := time.Parse(time.RFC3339, v); err == nil {
			return t, nil
		}
		if t, err := time.Parse(time.DateOnly, v); err == nil {
			if end {
				t = t.Add(24*time.Hour - time.Second)
			}
			return t, nil
		}
		return time.Time{}, badInput("{"+field+"} %q: not a run ID of the store, a date (2026-12-03) or a time (2026-12-03T14:00:00Z)", v)
	}
	if since, err = parse("Since", f.Since, false); err != nil {
		return since, until, err
	}
	until, err = parse("Until", f.Until, true)
	return since, until, err
}

// check refuses patterns path.Match cannot read, and a negative Last.
func (f Filter) check() error {
	if f.Last < 0 {
		return badInput("{Last} %d: want 0 (all runs) or more", f.Last)
	}
	for _, p := range f.Benchmarks {
		for _, e := range strings.Split(p, "/") {
			if _, err := path.Match(e, ""); err != nil {
				return badInput("{Benchmarks} %q: %v", p, err)
			}
		}
	}
	return nil
}

// Point is one run's value in a series: the median of the run's
// repetitions (go test -count), and the repetitions themselves.
type Point struct {
	// Run indexes the key's runs (KeyHistory.Runs).
	Run    int
	Median float64
	Values []float64
}

// Series is one unit of one benchmark across the runs of one key.
type Series struct {
	Key                     string
	Benchmark               string // Perf/profile=basic/scenario=…/conc=1
	Profile, Scenario, Unit string
	// Direction is the unit's better direction as the gate resolves it
	// (the newest run's Unit line, thresholds.yaml's better:, the unit's
	// name); DirectionFrom says which decided.
	Direction     units.Direction
	DirectionFrom string
	// Points are the runs that measured the unit, oldest first.
	Points []Point
	// Members are the benchmarks' series of a profile series (its points
	// their geometric mean, profileSeries); nil for a benchmark's own.
	Members []*Series
}

// Gated reports whether the series has a direction, so that a change can
// be a regression.
func (s *Series) Gated() bool {
	return s.Direction == units.Lower || s.Direction == units.Higher
}

// Medians are the points' medians.
func (s *Series) Medians() []float64 {
	out := make([]float64, len(s.Points))
	for i, p := range s.Points {
		out[i] = p.Median
	}
	return out
}

// Event is a known event at a run: an image or vLLM version change, a
// re-baseline, or a note given when the run was added.
type Event struct {
	// Run indexes the key's runs: the first run after the event.
	Run   int
	RunID string
	Kind  string // image, vllm-version, baseline, note
	Text  string
}

// The kinds of Event.
const (
	EventImage       = "image"
	EventVLLMVersion = "vllm-version"
	EventBaseline    = "baseline"
	EventNote        = "note"
)

// KeyHistory is the runs of one key, oldest first, with their events and
// series.
type KeyHistory struct {
	Key    string
	Runs   []*Run
	Events []Event
	Series []*Series
}

// Group sorts runs (oldest first, as Store.Runs returns them) by key,
// keeps what f selects, and builds each key's events and series, with the
// units' directions from set (nil for the defaults).
func Group(runs []*Run, f Filter, set *thresholds.Set) ([]*KeyHistory, error) {
	if err := f.check(); err != nil {
		return nil, err
	}
	since, until, err := f.bounds(runs)
	if err != nil {
		return nil, err
	}
	var out []*KeyHistory
	byKey := map[string]*KeyHistory{}
	for _, r := range runs {
		if !f.keepRun(r) || (!since.IsZero() && r.Date.Before(since)) || (!until.IsZero() && r.Date.After(until)) {
			continue
		}
		kh := byKey[r.Key]
		if kh == nil {
			kh = &KeyHistory{Key: r.Key}
			byKey[r.Key] = kh
			out = append(out, kh)
		}
		kh.Runs = append(kh.Runs, r)
	}
	if len(out) == 0 {
		return nil, badInput("no run matches: the store has %s", describeKeys(runs))
	}
	for _, kh := range out {
		if f.Last > 0 && len(kh.Runs) > f.Last {
			kh.Runs = kh.Runs[len(kh.Runs)-f.Last:]
		}
		kh.events()
		kh.series(f, set)
	}
	return out, nil
}

func describeKeys(runs []*Run) string {
	count := map[string]int{}
	var keys []string
	for _, r := range runs {
		if count[r.Key] == 0 {
			keys = append(keys, r.Key)
		}
		count[r.Key]++
	}
	if len(keys) == 0 {
		return "no runs (add some with vllmperf history add)"
	}
	var parts []string
	for _, k := range keys {
		parts = append(parts, plural(count[k], "run", "runs")+" of "+k)
	}
	return strings.Join(parts, "; ")
}

func (kh *KeyHistory) events() {
	for i, r := range kh.Runs {
		for _, n := range r.Notes {
			kh.Events = append(kh.Events, Event{Run: i, RunID: r.ID, Kind: EventNote, Text: n})
		}
		if i == 0 {
			continue
		}
		prev := kh.Runs[i-1]
		for _, k := range slices.Concat(EventConfig, input.ProvenanceKeys) {
			a, b := prev.Config[k], r.Config[k]
			if a != b && !provenanceAppears(k, a, b) {
				kh.Events = append(kh.Events, Event{Run: i, RunID: r.ID, Kind: k, Text: fmt.Sprintf("%s %s → %s", k, orNone(a), orNone(b))})
			}
		}
		pb, rb := prev.Baseline, r.Baseline
		if pb != nil && rb != nil && pb.SHA256 != rb.SHA256 {
			text := "re-baseline: " + rb.Path + " changed"
			if pb.Path != rb.Path {
				text = "re-baseline: " + pb.Path + " → " + rb.Path
			}
			kh.Events = append(kh.Events, Event{Run: i, RunID: r.ID, Kind: EventBaseline, Text: text})
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// series builds one series per benchmark and unit, in the order the runs
// first list them; directions come from the newest run that has the unit.
func (kh *KeyHistory) series(f Filter, set *thresholds.Set) {
	index := map[[2]string]*Series{}
	for i, r := range kh.Runs {
		for _, b := range r.Benchmarks {
			if !f.keepBenchmark(b.Name) {
				continue
			}
			for _, u := range b.Units {
				if !f.keepUnit(u) {
					continue
				}
				id := [2]string{b.Name, u}
				s := index[id]
				if s == nil {
					s = &Series{Key: kh.Key, Benchmark: b.Name, Profile: b.Profile, Scenario: b.Scenario, Unit: u}
					index[id] = s
					kh.Series = append(kh.Series, s)
				}
				vs := b.Values[u]
				s.Points = append(s.Points, Point{Run: i, Median: median(vs), Values: vs})
				s.Direction, s.DirectionFrom = r.Input.Direction(set, b.Profile, b.Scenario, u)
			}
		}
	}
}

// median of vs (not empty): the middle value, or the mean of the two.
func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
