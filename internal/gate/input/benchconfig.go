package input

import (
	"fmt"
	"strconv"
	"strings"
)

// ProfilesKey names the set of profiles in a Mismatch.
const ProfilesKey = "profiles"

// A Mismatch is a configuration key whose values differ between the two
// sides, or within one side for the same benchmark.
type Mismatch struct {
	// Key is the configuration key, or ProfilesKey.
	Key string
	// Baseline and New are the values on each side, quoted and joined by
	// ", " when a side has several, "(none)" where the key is absent.
	Baseline, New string
	// Benchmark is the first benchmark affected ("" for ProfilesKey);
	// Count how many benchmarks differ this way.
	Benchmark string
	Count     int
	// Detail, when set, says what the difference means (provenance.go).
	Detail string
}

// MismatchError refuses a comparison of results measured on different
// setups. Its message ends where a command adds how to compare anyway
// (Options.Force).
type MismatchError struct {
	Baseline, New string // the inputs' names
	Mismatches    []Mismatch
}

func (e *MismatchError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s and %s were not measured on the same setup:", e.Baseline, e.New)
	for _, m := range e.Mismatches {
		b.WriteString("\n  ")
		b.WriteString(m.Describe(e.Baseline, e.New))
	}
	b.WriteString("\ncompare results of one setup (re-baseline after a change of GPU, driver, model or image: see docs/gate.md)")
	return b.String()
}

// Describe says the mismatch in words, naming the two inputs.
func (m Mismatch) Describe(baseName, newName string) string {
	s := fmt.Sprintf("%s is %s in %s but %s in %s", m.Key, m.Baseline, baseName, m.New, newName)
	if m.Detail != "" {
		s += ": " + m.Detail
	}
	if m.Baseline == m.New {
		s = fmt.Sprintf("%s varies within both files: %s", m.Key, m.Baseline)
	}
	if m.Key == ProfilesKey {
		s = fmt.Sprintf("the profiles differ: %s in %s, %s in %s", m.Baseline, baseName, m.New, newName)
		if m.Detail != "" {
			s += ": " + m.Detail
		}
		return s
	}
	switch {
	case m.Count > 1:
		s += fmt.Sprintf(" (%s and %d more benchmarks)", m.Benchmark, m.Count-1)
	case m.Benchmark != "":
		s += fmt.Sprintf(" (%s)", m.Benchmark)
	}
	return s
}

// CheckConfig compares the configuration keys of every benchmark both
// sides ran, and the sides' sets of profiles.
func CheckConfig(base, next *Side, keys []string) []Mismatch {
	var out mismatchSet
	for _, key := range base.Order {
		nb, ok := next.Benches[key]
		if !ok {
			continue
		}
		bb := base.Benches[key]
		for _, k := range keys {
			bv, nv := bb.Config[k], nb.Config[k]
			if len(bv) == 1 && len(nv) == 1 && bv[0] == nv[0] {
				continue
			}
			m := Mismatch{Key: k, Baseline: joinValues(bv), New: joinValues(nv)}
			out.add(m, bb.Name)
		}
	}
	if m, _ := ProfileSet(base, next); m != nil {
		out.list = append(out.list, *m)
	}
	return out.list
}

// mismatchSet gathers mismatches, one per key and pair of values: the
// first benchmark that shows it is named, and Count says how many do.
type mismatchSet struct {
	list  []Mismatch
	index map[[3]string]int
}

// add records m, seen on the benchmark named bench.
func (s *mismatchSet) add(m Mismatch, bench string) {
	id := [3]string{m.Key, m.Baseline, m.New}
	if i, seen := s.index[id]; seen {
		s.list[i].Count++
		return
	}
	if s.index == nil {
		s.index = map[[3]string]int{}
	}
	m.Benchmark, m.Count = bench, 1
	s.index[id] = len(s.list)
	s.list = append(s.list, m)
}

func joinValues(vs []string) string {
	shown := make([]string, 0, len(vs))
	for _, v := range vs {
		if v == "" {
			shown = append(shown, "(none)")
			continue
		}
		shown = append(shown, strconv.Quote(v))
	}
	if len(shown) == 0 {
		return "(none)"
	}
	return strings.Join(shown, ", ")
}
