package input

import (
	"fmt"
	"slices"
	"strings"
)

// ProfileSet compares the sides' sets of profiles.
//
// A profile only the new results have (a file added to
// scenarios/profiles/ before `make baseline`) is no mismatch: its
// benchmarks are new ones, listed in Report.OnlyNew and not compared (the
// absolute limits still apply to them), and note says so.
//
// A profile only the baseline has is a Mismatch (ProfilesKey): the new
// results lack every benchmark of it, so the gate could not pass, and the
// likelier cause is a run of fewer profiles (VLLMPERF_PROFILES) against a
// full baseline than a profile removed on purpose, which a re-baseline
// records. --force compares anyway.
func ProfileSet(base, next *Side) (m *Mismatch, note string) {
	bp, np := base.Profiles(), next.Profiles()
	var added, removed []string
	for _, p := range np {
		if !slices.Contains(bp, p) {
			added = append(added, p)
		}
	}
	for _, p := range bp {
		if !slices.Contains(np, p) {
			removed = append(removed, p)
		}
	}
	if len(added) > 0 {
		note = fmt.Sprintf("new profile(s) %s: not in the baseline, their benchmarks are not compared (listed as in the new results only); `make baseline` adds them", strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		m = &Mismatch{Key: ProfilesKey, Baseline: joinValues(bp), New: joinValues(np),
			Detail: fmt.Sprintf("the new results lack the baseline's profile(s) %s: run them (VLLMPERF_PROFILES), or re-baseline if they were removed on purpose", strings.Join(removed, ", "))}
	}
	return m, note
}
