package diagnose_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/results/diagnose"
	"github.com/vllmperf/vllmperf/internal/target/profile"
	"github.com/vllmperf/vllmperf/internal/target/serverfamily"
	"github.com/vllmperf/vllmperf/scenarios"
)

// TestRulesNameProfiles: every rule has advice, each naming a built-in
// profile (or every profile) with its why, and the advice comes from the
// profiles' own files: every diagnose: entry of a built-in profile is
// found under its rule, with the profile's flag values filled in.
func TestRulesNameProfiles(t *testing.T) {
	rules, err := diagnose.Rules()
	require.NoError(t, err)
	builtin := profile.Names()
	ids := map[string]bool{}
	for _, r := range rules {
		assert.False(t, ids[r.ID], "rule %s twice", r.ID)
		ids[r.ID] = true
		assert.NotEmpty(t, r.Title, r.ID)
		assert.NotEmpty(t, r.Remedies, r.ID)
		assert.NotEmpty(t, r.Profiles, "%s: no profile addresses it (add it under diagnose: in a profile file)", r.ID)
		for _, a := range r.Profiles {
			assert.True(t, a.Profile == "every profile" || slices.Contains(builtin, a.Profile), "%s names %q, not a built-in profile", r.ID, a.Profile)
			assert.NotEmpty(t, a.Why, "%s: why %s", r.ID, a.Profile)
			assert.NotContains(t, a.Why, "{", "%s: %s's advice has an unfilled flag", r.ID, a.Profile)
		}
	}
	for _, name := range builtin {
		p, err := profile.Builtin(name)
		require.NoError(t, err)
		for _, a := range p.Advice {
			i := slices.IndexFunc(rules, func(r *diagnose.Rule) bool { return r.ID == a.Rule })
			require.GreaterOrEqual(t, i, 0, "%s: diagnose: %s", name, a.Rule)
			assert.Contains(t, rules[i].Profiles, diagnose.Advice{Profile: name, Why: a.Why})
		}
	}
}

// TestRulesAdviceQuotesFlags: advice that quotes a flag value reads it
// from the profile, so a profile's advice follows its flags.
func TestRulesAdviceQuotesFlags(t *testing.T) {
	rules, err := diagnose.Rules()
	require.NoError(t, err)
	p, err := profile.Builtin("low-latency")
	require.NoError(t, err)
	seqs, ok := p.Flag("max-num-seqs")
	require.True(t, ok)
	for _, r := range rules {
		if r.ID != diagnose.TPOTJitter {
			continue
		}
		assert.Contains(t, r.Profiles, diagnose.Advice{Profile: "low-latency", Why: "--max-num-seqs " + seqs + " bounds the batch and so the step time"})
	}
}

// TestRulesForAddedProfile: a folder with the built-in profiles and a
// copy of basic under a new name with another --max-num-seqs and advice
// of its own gives the same rules, the new profile's advice with its own
// value; a profile without diagnose: is named by no rule.
func TestRulesForAddedProfile(t *testing.T) {
	dir := copyProfiles(t)
	basic, err := os.ReadFile(filepath.Join(dir, "basic.yaml"))
	require.NoError(t, err)
	added := strings.Replace(string(basic), "name: basic", "name: basic-wide", 1)
	added = strings.Replace(added, "flags:\n", "flags:\n  max-num-seqs: 48\n", 1)
	plain := added
	added += "diagnose:\n  small-batch: --max-num-seqs {max-num-seqs}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "basic-wide.yaml"), []byte(added), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "basic-plain.yaml"), []byte(strings.Replace(plain, "basic-wide", "basic-plain", 1)), 0o644))

	want, err := diagnose.Rules()
	require.NoError(t, err)
	got, err := diagnose.RulesFor(profile.Dir(dir))
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i, r := range got {
		extra := slices.DeleteFunc(slices.Clone(r.Profiles), func(a diagnose.Advice) bool { return slices.Contains(want[i].Profiles, a) })
		if r.ID == diagnose.SmallBatch {
			assert.Equal(t, []diagnose.Advice{{Profile: "basic-wide", Why: "--max-num-seqs 48"}}, extra)
			continue
		}
		assert.Empty(t, extra, r.ID)
	}
}

// TestRulesForBadAdvice: a diagnose: entry naming no rule is an error at
// its file and line, with a did-you-mean.
func TestRulesForBadAdvice(t *testing.T) {
	dir := copyProfiles(t)
	bad := "name: typo\nflags:\n  dtype: float16\ndiagnose:\n  kv-presure: fp8\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "typo.yaml"), []byte(bad), 0o644))
	_, err := diagnose.RulesFor(profile.Dir(dir))
	var pe *profile.Error
	require.True(t, errors.As(err, &pe), "error %v", err)
	assert.Equal(t, filepath.Join(dir, "typo.yaml"), pe.File)
	assert.Equal(t, 5, pe.Line)
	assert.Contains(t, err.Error(), `"kv-presure" is not a diagnosis rule (did you mean "kv-pressure"?)`)
}

// copyProfiles copies the built-in profiles into a new folder.
func copyProfiles(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range profile.BuiltinsFor(serverfamily.VLLM).Names() {
		data, err := scenarios.Profiles.ReadFile("profiles/vllm/" + name + ".yaml")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), data, 0o644))
	}
	return dir
}
