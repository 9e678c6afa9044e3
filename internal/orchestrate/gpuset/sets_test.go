package gpuset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSets(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Set
		err  string
	}{
		{"0,1;2,3", []Set{{"0", "1"}, {"2", "3"}}, ""},
		{" 0 ; 1 ", []Set{{"0"}, {"1"}}, ""},
		// Fake sets for the simulator image: any names.
		{"a;b", []Set{{"a"}, {"b"}}, ""},
		{"GPU-8a1f;GPU-77c2", []Set{{"GPU-8a1f"}, {"GPU-77c2"}}, ""},
		// A device listed twice in one set counts once.
		{"0,0;1", []Set{{"0"}, {"1"}}, ""},
		{"0,1;1,2", nil, "device 1 is in sets 1 and 2"},
		{"0;;1", nil, "set 2 is empty"},
		{"0,;1", nil, `"" is not a device id`},
		{"all;0", nil, "a set names its devices, not all"},
		{"0;none", nil, "not none"},
		{"0 1;2", nil, `"0 1" is not a device id`},
	} {
		got, err := ParseSets(tc.in)
		if tc.err != "" {
			require.Error(t, err, tc.in)
			assert.Contains(t, err.Error(), tc.err, tc.in)
			assert.Contains(t, err.Error(), EnvGPUSets, "the error names the variable")
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got, tc.in)
	}
}

func TestSetsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name, sets, gpus string
		width            int
		want             []Set
		err              string
	}{
		// Unset: one process, the profiles one after another.
		{"unset", "", "0,1,2,3", 1, nil, ""},
		{"explicit", "0,1;2,3", "", 2, []Set{{"0", "1"}, {"2", "3"}}, ""},
		// auto cuts VLLMPERF_GPUS by the widest profile; a leftover
		// device is not used.
		{"auto by one", "auto", "0,1,2,3", 1, []Set{{"0"}, {"1"}, {"2"}, {"3"}}, ""},
		{"auto by two", "AUTO", "0,1,2,3,4", 2, []Set{{"0", "1"}, {"2", "3"}}, ""},
		{"auto too few", "auto", "0", 2, nil, "fewer than the 2"},
		{"auto without ids", "auto", "all", 1, nil, "lists no device ids"},
		{"auto repeated id", "auto", "0,0", 1, nil, "VLLMPERF_GPUS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvGPUSets, tc.sets)
			t.Setenv(envGPUs, tc.gpus)
			got, err := SetsFromEnv(tc.width)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCheck(t *testing.T) {
	assert.ErrorContains(t, Check([]Set{{"0"}}, []Job{{"basic", 1}}), "needs two or more")
	assert.ErrorContains(t, Check([]Set{{"0"}, {"1"}}, []Job{{"basic", 1}, {"tp2", 2}}), "profile tp2 needs 2 GPUs")
	assert.NoError(t, Check([]Set{{"0"}, {"1", "2"}}, []Job{{"basic", 1}, {"tp2", 2}}))
}
