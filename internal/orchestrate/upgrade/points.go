package upgrade

import (
	"fmt"
	"path"
	"strings"

	"github.com/vllmperf/vllmperf/internal/run/scenario"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/vocab/benchname"
)

// DefaultPoints is a small representative set, all on the basic profile
// (one server per side), in the suite's order: prefill latency of a long
// prompt alone, batched decoding (the sweep at concurrency 8), open-loop
// queueing (Poisson at 4 requests/s), and the prefix cache (multi-turn
// chats). An upgrade that slows any of these shows in TTFT, TPOT,
// throughput or hit rate.
var DefaultPoints = []string{
	benchname.Name{Profile: "basic", Scenario: "ttft-tpot", Point: benchname.ClosedPoint("long", 1)}.String(),
	benchname.Name{Profile: "basic", Scenario: "concurrency-sweep", Point: benchname.ClosedPoint("", 8)}.String(),
	benchname.Name{Profile: "basic", Scenario: "poisson", Point: benchname.OpenPoint("", "4")}.String(),
	benchname.Name{Profile: "basic", Scenario: "prefix-reuse", Point: benchname.ClosedPoint("", 8)}.String(),
}

// Target is one point the gate runs on both sides.
type Target struct {
	// Profile is the server profile the point runs on.
	Profile string
	// Point is the scenario point, sized.
	Point scenario.Point
	// Name is profile=P/scenario=S/KEY, the suite's run name (the bench
	// name without "Perf/").
	Name string
}

// Catalog lists the profiles and scenarios points are chosen from.
type Catalog struct {
	Profiles  []string
	Scenarios []string
	// Scenario returns a scenario by name.
	Scenario func(name string) (*scenario.Scenario, error)
}

// Builtin is the suite's catalog: the built-in profiles and scenarios.
func Builtin() Catalog {
	return Catalog{Profiles: profile.Names(), Scenarios: scenario.Names(), Scenario: scenario.Builtin}
}

// SelectPoints expands patterns into targets at size, in the suite's order
// (profile, then scenario, then point). A pattern is a run name as in the
// bench output without "Perf/" (profile=basic/scenario=poisson/rate=4),
// with path.Match globs in each element (profile=*/scenario=poisson/*); it
// also matches every point below it (profile=basic/scenario=ttft-tpot is
// all three prompts). A pattern that matches nothing is an error that
// lists what exists.
func SelectPoints(c Catalog, size scenario.Size, patterns []string) ([]Target, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("%w: no points: give at least one, e.g. %s", ErrSettings, DefaultPoints[0])
	}
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("%w: point pattern %q: %v", ErrSettings, p, err)
		}
	}
	var all, out []Target
	used := make([]bool, len(patterns))
	for _, prof := range c.Profiles {
		for _, scName := range c.Scenarios {
			sc, err := c.Scenario(scName)
			if err != nil {
				return nil, err
			}
			for _, pt := range sc.Points(size) {
				t := Target{Profile: prof, Point: pt, Name: benchname.Name{Profile: prof, Scenario: scName, Point: pt.Key}.String()}
				all = append(all, t)
				hit := false
				for i, p := range patterns {
					if matches(p, t.Name) {
						used[i], hit = true, true
					}
				}
				if hit {
					out = append(out, t)
				}
			}
		}
	}
	for i, p := range patterns {
		if !used[i] {
			return nil, fmt.Errorf("%w: point %q matches none of the %d points at %s size; they are named like %s (profiles: %s; scenarios: %s)",
				ErrSettings, p, len(all), size, DefaultPoints[0], strings.Join(c.Profiles, ", "), strings.Join(c.Scenarios, ", "))
		}
	}
	return out, nil
}

// matches reports whether pattern matches name or a leading part of it
// that ends at a "/".
func matches(pattern, name string) bool {
	elems := strings.Split(name, "/")
	for n := len(elems); n >= 1; n-- {
		if ok, _ := path.Match(pattern, strings.Join(elems[:n], "/")); ok {
			return true
		}
	}
	return false
}

// profilesOf lists the targets' profiles in order of first appearance.
func profilesOf(targets []Target) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range targets {
		if !seen[t.Profile] {
			seen[t.Profile] = true
			out = append(out, t.Profile)
		}
	}
	return out
}
