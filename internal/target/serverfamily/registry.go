package serverfamily

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vllmperf/vllmperf/internal/vocab/envvar"
)

// registry holds the registered families by Key.
var registry = map[string]*Family{}

// conflicts records Register calls that could not register their family
// (no Key, a Key taken): Conflicts reports them, and a test fails on any.
var conflicts []string

// Register adds f to the families ByName, All and Detect know, under
// f.Key, and returns f, so that a family's file declares its value as
// `var X = Register(&Family{...})`: a new family is that one file (and its
// profiles under scenarios/profiles/KEY/). A family without a Key, or
// with one already taken, is not registered and is reported by
// Conflicts.
func Register(f *Family) *Family {
	switch {
	case f == nil || f.Key == "":
		conflicts = append(conflicts, "a family without a Key")
	case registry[f.Key] != nil:
		conflicts = append(conflicts, fmt.Sprintf("Key %q registered twice (%s and %s)", f.Key, registry[f.Key].Name, f.Name))
	default:
		registry[f.Key] = f
	}
	return f
}

// Conflicts lists the Register calls that registered nothing.
func Conflicts() []string { return slices.Clone(conflicts) }

// Keys lists the registered families' keys, sorted.
func Keys() []string { return slices.Sorted(maps.Keys(registry)) }

// All returns the registered families in Key order.
func All() []*Family {
	out := make([]*Family, 0, len(registry))
	for _, k := range Keys() {
		out = append(out, registry[k])
	}
	return out
}

// ByName returns the registered family whose Key is name (any case,
// surrounding space ignored); the error for any other name lists the
// valid ones.
func ByName(name string) (*Family, error) {
	if f, ok := registry[strings.ToLower(strings.TrimSpace(name))]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("server family %q is unknown: use one of %s", name, strings.Join(Keys(), ", "))
}

// FromEnv returns the family VLLMPERF_FAMILY names, and false when it is
// unset; its error names the variable and lists the valid families.
func FromEnv() (*Family, bool, error) {
	v, ok := envvar.Family.Lookup()
	if !ok {
		return nil, false, nil
	}
	f, err := ByName(v)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", envvar.Family.Name, err)
	}
	return f, true, nil
}

// Selected is the family VLLMPERF_FAMILY names, or Default when it is
// unset.
func Selected() (*Family, error) {
	f, ok, err := FromEnv()
	if err != nil || !ok {
		return Default, err
	}
	return f, nil
}

// Detect returns the registered family whose Metrics.Prefix starts the
// most of names (metric names as an exposition writes them): an exposition
// whose names carry "sglang:" is SGLang's. False when no name carries a
// registered prefix. A tie goes to the family first in Key order.
func Detect(names []string) (*Family, bool) {
	var best *Family
	most := 0
	for _, f := range All() {
		n := 0
		for _, name := range names {
			if strings.HasPrefix(name, f.Metrics.Prefix) {
				n++
			}
		}
		if n > most {
			best, most = f, n
		}
	}
	return best, best != nil
}

// DetectText is Detect on a Prometheus text exposition: the names of its
// samples (comment lines skipped).
func DetectText(exposition []byte) (*Family, bool) {
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if i := strings.IndexAny(line, "{ \t"); i > 0 {
			names = append(names, line[:i])
		}
	}
	return Detect(names)
}
