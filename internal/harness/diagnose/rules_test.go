package diagnose_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/vllmperf/vllmperf/internal/harness/diagnose"
	"github.com/vllmperf/vllmperf/internal/harness/profile"
)

// TestRulesNameProfiles: every rule names the profiles of ours that
// address it, each a built-in profile (or every profile), and every
// built-in profile is named by some rule.
func TestRulesNameProfiles(t *testing.T) {
	builtin := profile.Names()
	named := map[string]bool{}
	ids := map[string]bool{}
	for _, r := range diagnose.Rules() {
		assert.False(t, ids[r.ID], "rule %s twice", r.ID)
		ids[r.ID] = true
		assert.NotEmpty(t, r.Title, r.ID)
		assert.NotEmpty(t, r.Remedies, r.ID)
		assert.NotEmpty(t, r.Profiles, r.ID)
		for _, a := range r.Profiles {
			assert.True(t, a.Profile == "every profile" || slices.Contains(builtin, a.Profile), "%s names %q, not a built-in profile", r.ID, a.Profile)
			assert.NotEmpty(t, a.Why, "%s: why %s", r.ID, a.Profile)
			named[a.Profile] = true
		}
	}
	for _, p := range builtin {
		if p == "basic" {
			continue // the defaults: what the other profiles change
		}
		assert.True(t, named[p], "no rule names the profile %s", p)
	}
}
