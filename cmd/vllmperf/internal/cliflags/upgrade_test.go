package cliflags

import (
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/run/scenario"
)

// TestSuiteSettings: --size and --thresholds go over the environment's
// suite settings only when given; a bad value names its flag.
func TestSuiteSettings(t *testing.T) {
	t.Setenv("VLLMPERF_SIZE", "full")
	for _, tc := range []struct {
		name     string
		args     []string
		want     scenario.Size
		wantErr  string
		maxPairs int
	}{
		// Nothing given: the environment's size, the default pair cap.
		{"defaults", nil, scenario.Full, "", 0},
		// --size over VLLMPERF_SIZE; --max-pairs given is the cap.
		{"given", []string{"--size", "quick", "--max-pairs", "12"}, scenario.Quick, "", 12},
		// A size that does not exist.
		{"bad size", []string{"--size", "huge"}, "", "--size: ", 0},
		// A thresholds file that does not exist.
		{"bad thresholds", []string{"--thresholds", "testdata/no-such.yaml"}, "", "no-such.yaml", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := &UpgradeFlags{}
			fs := pflag.NewFlagSet("upgrade-gate", pflag.ContinueOnError)
			Upgrade(fs, o)
			require.NoError(t, fs.Parse(tc.args))
			got, err := SuiteSettings(fs.Changed, o.Size, o.Thresholds)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got.Size)
			assert.Equal(t, tc.maxPairs, PairCap(fs.Changed, o.MaxPairs))
		})
	}
}
