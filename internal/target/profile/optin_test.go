package profile

import (
	"bytes"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The opt-in profiles: one per traffic kind, found by name, listed, and
// left out of Names (the suite's default set).
func TestOptInProfiles(t *testing.T) {
	names := OptInNames()
	assert.Equal(t, []string{"embedding", "lora", "reasoning", "vision"}, names)
	var list bytes.Buffer
	require.NoError(t, WriteList(&list))
	for _, n := range names {
		assert.False(t, slices.Contains(Names(), n), "%s is in the suite's default set", n)
		p, err := Builtin(n)
		require.NoError(t, err, n)
		assert.Equal(t, n, p.Name)
		assert.NotEmpty(t, p.Description, n)
		assert.Contains(t, list.String(), "\n"+n+" ", "vllmperf profiles lists %s", n)
		r, err := Resolve(n)
		require.NoError(t, err, n)
		assert.Equal(t, p.Args(), r.Args())
	}
	_, err := Builtin("no-such-profile")
	assert.ErrorContains(t, err, "is not built in")
}
