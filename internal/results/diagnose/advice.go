package diagnose

import (
	"fmt"
	"strings"

	"github.com/vllmperf/vllmperf/internal/suggest"
	"github.com/vllmperf/vllmperf/internal/target/profile"
)

// Rules returns the rules in order, each with the advice of the built-in
// profiles that address it (each profile file's diagnose:).
func Rules() ([]*Rule, error) { return RulesFor(profile.Builtins()) }

// RulesFor returns the rules in order, each with the advice of the
// profiles of set that address it: a rule's own advice for every profile
// first, then each profile's diagnose: entry for the rule, in profile
// name order. A diagnose: entry that names no rule is an error with its
// file and line.
func RulesFor(set profile.Set) ([]*Rule, error) {
	ps, err := set.All()
	if err != nil {
		return nil, err
	}
	out := make([]*Rule, len(rules))
	byID := map[string]*Rule{}
	for i, r := range rules {
		c := *r
		c.Profiles = append([]Advice(nil), r.Profiles...)
		out[i], byID[r.ID] = &c, &c
	}
	for _, p := range ps {
		for _, a := range p.Advice {
			r, ok := byID[a.Rule]
			if !ok {
				return nil, unknownRule(p, a)
			}
			r.Profiles = append(r.Profiles, Advice{Profile: p.Name, Why: a.Why})
		}
	}
	return out, nil
}

// unknownRule words a profile's diagnose: entry for a rule that does not
// exist.
func unknownRule(p profile.Profile, a profile.Advice) error {
	ids := make([]string, len(rules))
	for i, r := range rules {
		ids[i] = r.ID
	}
	msg := fmt.Sprintf("diagnose: %q is not a diagnosis rule", a.Rule)
	if s := suggest.Closest(a.Rule, ids); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	msg += "; the rules are " + strings.Join(ids, ", ")
	return &profile.Error{File: p.Source, Line: a.Line, Msg: msg}
}
