package perfgate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vllmperf/vllmperf/internal/orchestrate/gpuset"
	"github.com/vllmperf/vllmperf/internal/orchestrate/suite"
	"github.com/vllmperf/vllmperf/internal/results"
	"github.com/vllmperf/vllmperf/internal/target/server"
)

// TestStepGate: VLLMPERF_GATE_STEP=gate reads the bench.txt the matrix left
// in VLLMPERF_GATE_RESULTS, a failed benchmark's line making it status 1; without it,
// or with a step it does not know, it says what to do.
func TestStepGate(t *testing.T) {
	for _, tc := range []struct {
		name, step, bench string
		code              int
		err               string
	}{
		{"passed", StepGate, "BenchmarkPerf/profile=basic/x-2 1 1 ns/op\n", 0, ""},
		{"a part failed", StepGate, "--- FAIL: BenchmarkPerf/profile=basic/x\n    perf_test.go:228: check: FAIL\n", 1, ""},
		{"nothing merged", StepGate, "", 0, "vllmperf merge --out"},
		{"unknown step", "gates", "", 0, `VLLMPERF_GATE_STEP="gates": want suite`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(EnvStep, tc.step)
			o := Options{Results: t.TempDir()}
			if tc.bench != "" {
				require.NoError(t, os.WriteFile(filepath.Join(o.Results, results.BenchFile), []byte(tc.bench), 0o644))
			}
			path, code, err := o.benchOrSpread(t.Context(), suite.Config{}, 1)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(o.Results, results.BenchFile), path)
			assert.Equal(t, tc.code, code)
		})
	}
}

// TestSpreadJobs: the GPU sets need the container backend and sets wide
// enough; unset, the suite runs as one process.
func TestSpreadJobs(t *testing.T) {
	cfg := suite.Config{Backend: server.KindContainer, Profiles: []string{"basic", "low-latency"}}
	t.Setenv(gpuset.EnvGPUSets, "")
	sets, _, err := spreadJobs(cfg)
	require.NoError(t, err)
	assert.Nil(t, sets)

	t.Setenv(gpuset.EnvGPUSets, "0;1")
	sets, jobs, err := spreadJobs(cfg)
	require.NoError(t, err)
	assert.Len(t, sets, 2)
	assert.Equal(t, []gpuset.Job{{Profile: "basic", Width: 1}, {Profile: "low-latency", Width: 1}}, jobs)

	_, _, err = spreadJobs(suite.Config{Backend: server.KindSim, Profiles: cfg.Profiles})
	assert.ErrorContains(t, err, "use VLLMPERF_BACKEND=container")
}
