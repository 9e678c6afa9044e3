package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestImageLimitFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    string
		want int
		err  string
	}{
		{`{"image": 2}`, 2, ""},
		{`{"image": 0, "video": 1}`, 0, ""},
		{"image=3,video=1", 3, ""},
		{`{"video": 1}`, DefaultImageLimit, ""},
		{`{"image": -1}`, 0, "invalid value"},
		{"image", 0, "invalid value"},
	} {
		n, err := parseImageLimit(tc.v)
		if tc.err != "" {
			require.Error(t, err, tc.v)
			assert.True(t, strings.Contains(err.Error(), tc.err), err.Error())
			continue
		}
		require.NoError(t, err, tc.v)
		assert.Equal(t, tc.want, n, tc.v)
	}
}
